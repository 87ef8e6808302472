//! `wscbench clean`: remove every container and image labelled by wscbench.

use clap::Args;
use wscbench_engine::catalog::images;

use crate::errors::{Doing, ExpectedError};
use crate::exit::ExitCode;

/// `wscbench clean`'s command line.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Keep the images; remove only containers
    #[arg(long)]
    pub keep_images: bool,
}

pub async fn run(args: CleanArgs) -> Result<ExitCode, ExpectedError> {
    let engine = super::connect().await?;
    let cleaned = images::clean(&engine, args.keep_images)
        .await
        .doing(|| "removing what wscbench made")?;
    println!("removed {} container(s)", cleaned.containers);
    if !args.keep_images {
        println!("removed {} image(s)", cleaned.images);
    }
    Ok(ExitCode::Ok)
}
