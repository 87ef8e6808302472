//! `wscbench list`: the servers found through their manifests, and with `--variants` the
//! variants each declares.

use std::path::Path;

use clap::Args;

use crate::errors::ExpectedError;
use crate::exit::ExitCode;

/// `wscbench list`'s command line.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Also list each server's variants (run them with run --variant NAME or --variant all)
    #[arg(long)]
    pub variants: bool,
}

pub fn run(root: &Path, args: ListArgs) -> Result<ExitCode, ExpectedError> {
    let servers = super::discover(root)?;
    if servers.is_empty() {
        println!("no servers found under {}", root.join("servers").display());
        return Ok(ExitCode::Ok);
    }
    let width = servers.iter().map(|s| s.id.len()).max().unwrap_or(0);
    let tag_width = servers.iter().map(|s| s.tag.len()).max().unwrap_or(0);
    let lang_width = servers
        .iter()
        .map(|s| s.language.len())
        .max()
        .unwrap_or(0)
        .max(4);
    println!(
        "{:width$}  {:tag_width$}  {:lang_width$}  {:7}  FRAMEWORK",
        "ID", "TAG", "LANG", "PROFILE"
    );
    for s in &servers {
        println!(
            "{:width$}  {:tag_width$}  {:lang_width$}  {:7}  {}",
            s.id, s.tag, s.language, s.profile, s.framework
        );
        let (offered, not_offered) = s.describe_transports();
        println!("  transports: {offered}");
        for line in not_offered {
            println!("  not offered: {line}");
        }
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
    Ok(ExitCode::Ok)
}
