//! `wscbench list`: the servers found through their manifests, and with `--variants` the
//! variants each declares.

use std::path::Path;

use anyhow::Result;

use crate::cli::ListArgs;

pub fn run(root: &Path, args: ListArgs) -> Result<i32> {
    let servers = super::discover(root)?;
    if servers.is_empty() {
        println!("no servers found under {}", root.join("servers").display());
        return Ok(0);
    }
    let width = servers.iter().map(|s| s.id.len()).max().unwrap_or(0);
    let tag_width = servers.iter().map(|s| s.tag.len()).max().unwrap_or(0);
    println!(
        "{:width$}  {:tag_width$}  {:4}  {:7}  FRAMEWORK",
        "ID", "TAG", "LANG", "PROFILE"
    );
    for s in &servers {
        println!(
            "{:width$}  {:tag_width$}  {:4}  {:7}  {}",
            s.id, s.tag, s.language, s.profile, s.framework
        );
        if args.variants {
            let variants = s.describe_variants();
            if variants.is_empty() {
                println!("  (no variants)");
            }
            for v in variants {
                println!("  @{v}");
            }
        }
    }
    Ok(0)
}
