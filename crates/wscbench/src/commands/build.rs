//! `wscbench build`: the FROM-scratch images of the selected servers and of k6.

use std::path::Path;

use clap::Args;

use crate::args::SelectArgs;
use crate::errors::{Doing, ExpectedError};
use crate::exit::ExitCode;

/// `wscbench build`'s command line.
#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Rebuild even when an image with the same source hash exists
    #[arg(long)]
    pub rebuild: bool,
}

pub async fn run(root: &Path, args: BuildArgs) -> Result<ExitCode, ExpectedError> {
    let servers = super::select(root, &args.select)?;
    super::check_toolchains(&servers).await?;
    let engine = super::connect().await?;
    super::build_images(&engine, &servers, args.rebuild).await?;
    super::build_k6_image(&engine, args.rebuild)
        .await
        .doing(|| "building the k6 image")?;
    Ok(ExitCode::Ok)
}
