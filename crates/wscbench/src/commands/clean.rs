//! `wscbench clean`: remove every container and image labelled by wscbench.

use anyhow::Result;
use wscbench_engine::images;

use crate::cli::CleanArgs;
use crate::exit::ExitCode;

pub async fn run(args: CleanArgs) -> Result<ExitCode> {
    let engine = super::connect().await?;
    let cleaned = images::clean(&engine, args.keep_images).await?;
    println!("removed {} container(s)", cleaned.containers);
    if !args.keep_images {
        println!("removed {} image(s)", cleaned.images);
    }
    Ok(ExitCode::Ok)
}
