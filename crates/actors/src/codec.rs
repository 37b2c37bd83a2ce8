//! The one binary codec: serde types to bytes with bincode 2, always with a
//! size limit checked before anything is allocated.
//!
//! Used for records in the store and, later, frames on the hub link. Owns the
//! encoding configuration so that every byte Flotilla writes is read back the
//! same way. Must not touch IO.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Hard ceiling on what any single decode may allocate, whatever limit a
/// caller passes: 64 MiB.
pub const HARD_LIMIT: usize = 64 * 1024 * 1024;

type Config = bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<HARD_LIMIT>,
>;

fn config() -> Config {
    bincode::config::standard().with_limit::<HARD_LIMIT>()
}

/// Why bytes could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input is larger than the caller's limit.
    #[error("encoded value is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Size of the input.
        size: usize,
        /// The limit it broke.
        limit: usize,
    },
    /// The bytes are not a valid encoding of the expected type.
    #[error("malformed encoding: {0}")]
    Decode(#[from] bincode::error::DecodeError),
    /// The value could not be encoded.
    #[error("cannot encode: {0}")]
    Encode(#[from] bincode::error::EncodeError),
    /// Bytes were left over after the value.
    #[error("{0} trailing bytes after the encoded value")]
    Trailing(usize),
}

/// Encodes a value.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    Ok(bincode::serde::encode_to_vec(value, config())?)
}

/// Decodes a value from exactly `bytes`, refusing input over `limit` bytes
/// before decoding it.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, CodecError> {
    let limit = limit.min(HARD_LIMIT);
    if bytes.len() > limit {
        return Err(CodecError::TooLarge {
            size: bytes.len(),
            limit,
        });
    }
    let (value, used) = bincode::serde::decode_from_slice(bytes, config())?;
    if used != bytes.len() {
        return Err(CodecError::Trailing(bytes.len() - used));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_checks_limits() {
        let v = vec![String::from("a"); 10];
        let bytes = encode(&v).expect("encode");
        assert_eq!(decode::<Vec<String>>(&bytes, 1024).expect("decode"), v);
        assert!(matches!(
            decode::<Vec<String>>(&bytes, 3),
            Err(CodecError::TooLarge { .. })
        ));
    }

    #[test]
    fn refuses_garbage_and_trailing_bytes() {
        let mut bytes = encode(&7u32).expect("encode");
        bytes.push(0);
        assert!(matches!(
            decode::<u32>(&bytes, 64),
            Err(CodecError::Trailing(1))
        ));
        // A length prefix that claims far more than is there must fail
        // without allocating it.
        let claim = [0xfc, 0xff, 0xff, 0xff, 0x7f];
        assert!(decode::<Vec<u8>>(&claim, 64).is_err());
    }
}
