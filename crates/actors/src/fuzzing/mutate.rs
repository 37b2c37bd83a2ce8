//! Mutations of a seed: the edits a fuzzer makes to valid input to reach
//! the decoder's error paths (flip, insert, delete, truncate, splice,
//! repeat, a boundary byte, a dictionary token inserted or put in place of
//! a word). Positions are taken modulo the input's length, so every edit
//! applies to every input.

use proptest::prelude::*;

/// One edit of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Flip one bit.
    Flip {
        /// Where.
        at: usize,
        /// Which bit (0 to 7).
        bit: u8,
    },
    /// Insert one byte.
    Insert {
        /// Where.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// Delete a run of bytes.
    Delete {
        /// Where.
        at: usize,
        /// How many.
        len: u8,
    },
    /// Cut the input short.
    Truncate {
        /// The new length.
        at: usize,
    },
    /// Replace a byte with one at a boundary (0, 0x7f, 0x80, 0xff...).
    Boundary {
        /// Where.
        at: usize,
        /// Which boundary.
        which: u8,
    },
    /// Copy a run of another seed into this one.
    Splice {
        /// Which seed.
        from: usize,
        /// Where it is inserted.
        at: usize,
        /// Where the run starts in the other seed.
        start: usize,
        /// How long the run is.
        len: u8,
    },
    /// Repeat a run of the input.
    Repeat {
        /// Where the run starts.
        at: usize,
        /// How long it is.
        len: u8,
        /// How many more copies.
        times: u8,
    },
    /// Insert a dictionary token.
    Token {
        /// Where.
        at: usize,
        /// Which token.
        token: usize,
    },
    /// Put a dictionary token in place of the word (a run of letters,
    /// digits, `.`, `-`, `_` or `+`) at a position: a value of a text
    /// format becomes another (`900.0` becomes `nan`).
    Replace {
        /// Where.
        at: usize,
        /// Which token.
        token: usize,
    },
}

const BOUNDARIES: [u8; 8] = [0, 1, 0x7f, 0x80, 0xfb, 0xfc, 0xfe, 0xff];

/// Any edit.
pub(super) fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    prop_oneof![
        (at, 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (at, any::<u8>()).prop_map(|(at, byte)| Edit::Insert { at, byte }),
        (at, 1u8..16).prop_map(|(at, len)| Edit::Delete { at, len }),
        at.prop_map(|at| Edit::Truncate { at }),
        (at, any::<u8>()).prop_map(|(at, which)| Edit::Boundary { at, which }),
        (any::<usize>(), at, any::<usize>(), 1u8..64).prop_map(|(from, at, start, len)| {
            Edit::Splice {
                from,
                at,
                start,
                len,
            }
        }),
        (at, 1u8..16, 1u8..8).prop_map(|(at, len, times)| Edit::Repeat { at, len, times }),
        (at, any::<usize>()).prop_map(|(at, token)| Edit::Token { at, token }),
        (at, any::<usize>()).prop_map(|(at, token)| Edit::Replace { at, token }),
    ]
}

/// Seed `index` of `seeds` with `edits` applied in order.
pub fn mutate(seeds: &[Vec<u8>], index: usize, edits: &[Edit], dictionary: &[Vec<u8>]) -> Vec<u8> {
    let mut out = seeds.get(index).cloned().unwrap_or_default();
    for e in edits {
        apply(&mut out, e, seeds, dictionary);
    }
    out
}

fn apply(out: &mut Vec<u8>, edit: &Edit, seeds: &[Vec<u8>], dictionary: &[Vec<u8>]) {
    let len = out.len();
    let pos = |at: usize| at % (len + 1);
    let byte = |at: usize| (len > 0).then(|| at % len);
    match *edit {
        Edit::Flip { at, bit } => {
            if let Some(i) = byte(at) {
                out[i] ^= 1 << (bit % 8);
            }
        }
        Edit::Insert { at, byte } => out.insert(pos(at), byte),
        Edit::Delete { at, len: n } => {
            let start = pos(at);
            let end = (start + usize::from(n)).min(len);
            out.drain(start..end);
        }
        Edit::Truncate { at } => out.truncate(pos(at)),
        Edit::Boundary { at, which } => {
            if let Some(i) = byte(at) {
                out[i] = BOUNDARIES[usize::from(which) % BOUNDARIES.len()];
            }
        }
        Edit::Splice {
            from,
            at,
            start,
            len: n,
        } => {
            let Some(other) = seeds.get(from % seeds.len().max(1)) else {
                return;
            };
            let start = start % (other.len() + 1);
            let end = (start + usize::from(n)).min(other.len());
            let run = other[start..end].to_vec();
            let at = pos(at);
            out.splice(at..at, run);
        }
        Edit::Repeat { at, len: n, times } => {
            let start = pos(at);
            let end = (start + usize::from(n)).min(len);
            let run = out[start..end].repeat(usize::from(times));
            out.splice(end..end, run);
        }
        Edit::Token { at, token } => {
            if let Some(t) = dictionary.get(token % dictionary.len().max(1)) {
                let at = pos(at);
                out.splice(at..at, t.iter().copied());
            }
        }
        Edit::Replace { at, token } => {
            if let (Some(i), Some(t)) = (byte(at), dictionary.get(token % dictionary.len().max(1)))
            {
                let (start, end) = word(out, i);
                out.splice(start..end, t.iter().copied());
            }
        }
    }
}

/// The word around byte `i`: empty at `i` when it is not in one.
fn word(bytes: &[u8], i: usize) -> (usize, usize) {
    let in_word = |b: &u8| b.is_ascii_alphanumeric() || b"._-+".contains(b);
    if !bytes.get(i).is_some_and(in_word) {
        return (i, i);
    }
    let start = bytes[..i]
        .iter()
        .rposition(|b| !in_word(b))
        .map_or(0, |p| p + 1);
    let end = bytes[i..]
        .iter()
        .position(|b| !in_word(b))
        .map_or(bytes.len(), |p| i + p);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(seed: &[u8], edit: Edit) -> Vec<u8> {
        let seeds = [seed.to_vec(), b"XYZ".to_vec()];
        mutate(&seeds, 0, &[edit], &[b"<t>".to_vec()])
    }

    #[test]
    fn each_edit_does_what_it_says() {
        assert_eq!(one(b"ab", Edit::Flip { at: 2, bit: 0 }), b"`b");
        assert_eq!(one(b"ab", Edit::Insert { at: 1, byte: b'-' }), b"a-b");
        assert_eq!(one(b"abcd", Edit::Delete { at: 1, len: 2 }), b"ad");
        assert_eq!(one(b"abcd", Edit::Truncate { at: 3 }), b"abc");
        assert_eq!(one(b"ab", Edit::Boundary { at: 1, which: 0 }), b"a\0");
        let splice = Edit::Splice {
            from: 1,
            at: 1,
            start: 1,
            len: 5,
        };
        assert_eq!(one(b"ab", splice), b"aYZb");
        let repeat = Edit::Repeat {
            at: 0,
            len: 1,
            times: 2,
        };
        assert_eq!(one(b"ab", repeat), b"aaab");
        assert_eq!(one(b"ab", Edit::Token { at: 1, token: 9 }), b"a<t>b");
        let replace = |at| one(b"x = 900.0\n", Edit::Replace { at, token: 0 });
        assert_eq!(replace(6), b"x = <t>\n");
        assert_eq!(replace(2), b"x <t>= 900.0\n");
    }

    #[test]
    fn edits_of_an_empty_input_do_not_panic() {
        for at in [0, 1, usize::MAX] {
            let edits = [
                Edit::Flip { at, bit: 7 },
                Edit::Delete { at, len: 3 },
                Edit::Boundary { at, which: 9 },
                Edit::Repeat {
                    at,
                    len: 4,
                    times: 3,
                },
            ];
            assert!(mutate(&[Vec::new()], 0, &edits, &[]).is_empty());
        }
        assert!(mutate(&[], 3, &[Edit::Truncate { at: 1 }], &[]).is_empty());
    }
}
