//! `wscbench doctor`: is everything a run needs here? One line per prerequisite, with the remedy.

use std::path::Path;
use std::process::Command;

use wscbench_engine::catalog::local::TOOLCHAINS;
use wscbench_engine::docker::daemon::DockerEngine;

use crate::errors::ExpectedError;
use crate::exit::ExitCode;

struct Finding {
    what: &'static str,
    ok: bool,
    detail: String,
}

fn tool(what: &'static str, program: &str, args: &[&str], remedy: &str) -> Finding {
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            Finding {
                what,
                ok: true,
                detail: text.lines().next().unwrap_or_default().trim().to_string(),
            }
        }
        _ => Finding {
            what,
            ok: false,
            detail: format!("not found; {remedy}"),
        },
    }
}

pub async fn run(root: &Path) -> Result<ExitCode, ExpectedError> {
    let setup = "run scripts/setup";
    let mut findings = Vec::new();
    match DockerEngine::connect().await {
        Ok(engine) => match engine.info().await {
            Ok(info) => findings.push(Finding {
                what: "docker engine",
                ok: true,
                detail: format!(
                    "{} (API {} negotiated), kernel {}, {} CPUs, cgroup v{}",
                    info.version, info.api_version, info.kernel, info.cpus, info.cgroup_version
                ),
            }),
            Err(e) => findings.push(Finding {
                what: "docker engine",
                ok: false,
                detail: e.to_string(),
            }),
        },
        Err(e) => findings.push(Finding {
            what: "docker engine",
            ok: false,
            detail: e.to_string(),
        }),
    }
    for toolchain in &TOOLCHAINS {
        let found = toolchain.version().await;
        findings.push(Finding {
            what: toolchain.name,
            ok: found.is_ok(),
            detail: found.unwrap_or_else(|_| format!("not found; {}", toolchain.remedy)),
        });
    }
    let k6 = super::k6_path();
    findings.push(tool(
        "k6",
        &k6.to_string_lossy(),
        &["version"],
        &format!("{setup} (builds k6 v1.8.1 into the cache)"),
    ));
    let lws = Path::new("/usr/lib/x86_64-linux-gnu/libwebsockets.a");
    findings.push(Finding {
        what: "libwebsockets",
        ok: lws.is_file(),
        detail: if lws.is_file() {
            lws.display().to_string()
        } else {
            format!("no static library; {setup} (libwebsockets-dev)")
        },
    });
    match super::discover(root) {
        Ok(servers) => findings.push(Finding {
            what: "servers",
            ok: !servers.is_empty(),
            detail: servers
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        Err(e) => findings.push(Finding {
            what: "servers",
            ok: false,
            detail: e.one_line(),
        }),
    }
    for f in &findings {
        println!(
            "{} {:<14} {}",
            if f.ok { "ok     " } else { "MISSING" },
            f.what,
            f.detail
        );
    }
    // A missing prerequisite is a set-up problem, which has its own exit code.
    Ok(if findings.iter().all(|f| f.ok) {
        ExitCode::Ok
    } else {
        ExitCode::Setup
    })
}
