//! `wscbench clean`: remove every container and image labelled by wscbench.

use std::collections::HashMap;

use anyhow::{Context, Result};
use bollard::query_parameters::{ListImagesOptionsBuilder, RemoveImageOptionsBuilder};
use wscbench_engine::docker::LABEL;

use crate::cli::CleanArgs;

pub async fn run(args: CleanArgs) -> Result<i32> {
    let engine = super::connect().await?;
    let containers = engine.remove_all_containers().await?;
    println!("removed {containers} container(s)");
    if args.keep_images {
        return Ok(0);
    }
    let filters = HashMap::from([("label", vec![LABEL])]);
    let images = engine
        .client()
        .list_images(Some(
            ListImagesOptionsBuilder::new().filters(&filters).build(),
        ))
        .await
        .context("listing images")?;
    let mut removed = 0;
    for image in images {
        engine
            .client()
            .remove_image(
                &image.id,
                Some(RemoveImageOptionsBuilder::new().force(true).build()),
                None,
            )
            .await
            .with_context(|| format!("removing image {}", image.repo_tags.join(", ")))?;
        removed += 1;
    }
    println!("removed {removed} image(s)");
    Ok(0)
}
