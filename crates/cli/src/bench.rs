//! `flotilla bench local`: placeholder until the benchmark lands.

use anyhow::Result;

use crate::args::BenchCommand;
use crate::commands::Env;

pub(crate) async fn run(_env: &Env, _cmd: BenchCommand) -> Result<u8> {
    Ok(0)
}
