//! `wscbench build`: the FROM-scratch images of the selected servers and of k6.

use std::path::Path;

use anyhow::Result;

use crate::cli::BuildArgs;
use crate::exit::ExitCode;

pub async fn run(root: &Path, args: BuildArgs) -> Result<ExitCode> {
    let servers = args.select.selection().apply(&super::discover(root)?)?;
    let engine = super::connect().await?;
    super::build_images(&engine, &servers, args.rebuild).await?;
    super::build_k6_image(&engine, args.rebuild).await?;
    Ok(ExitCode::Ok)
}
