//! Chromium over wss: every server whose manifest offers wss is started as a local process
//! with a certificate made for the test (and `--deflate` when it offers wss+deflate), and
//! headless chromium, trusting exactly that certificate by its public-key pin, opens a page
//! whose two sockets join room "public", pass a chat, check `ws.extensions` and leave with
//! a clean 1000 close. Ignored by default (it needs chromium and the built servers);
//! scripts/test runs it after the verify steps, which build every server.
//!
//! Environment: `WSCBENCH_CHROMIUM` (default `chromium`); `WSCBENCH_BROWSER_SERVERS`, a
//! comma list of server ids to limit the test to; `WSCBENCH_BROWSER_BINARIES`, a comma
//! list of `id=path` taking a server's binary from `path` instead of its manifest's
//! `binary`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use wscbench_engine::catalog::local::{self, LocalServer};
use wscbench_engine::catalog::{self, Server};
use wscbench_engine::net::tls::RunCert;
use wscbench_results::Transport;

/// The prefix of the one console line the page writes when it is done.
const MARKER: &str = "WSCBENCH-BROWSER ";
/// How long chromium may take to start, run the page and report.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(45);

/// The page: the steps run in order, each named, each bounded by 5 s; the outcome is one
/// console line, `WSCBENCH-BROWSER {"ok":…,"step":…,"detail":…,"extensions":…}`.
const PAGE_SCRIPT: &str = r#"
"use strict";
let step = "open the first socket";
let extensions = null;
const within = (what, promise) => Promise.race([promise, new Promise((_, reject) =>
  setTimeout(() => reject(new Error(`${what}: nothing within 5 s`)), 5000))]);
function open(name) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(CONFIG.url);
    ws.inbox = []; ws.waiters = new Set(); ws.closed = null;
    const poke = () => { for (const w of [...ws.waiters]) w(); };
    ws.onmessage = (e) => {
      try { ws.inbox.push(JSON.parse(e.data)); } catch (_) { ws.inbox.push({ notJson: String(e.data) }); }
      poke();
    };
    ws.onclose = (e) => { ws.closed = e; poke(); reject(new Error(`${name}: closed before it opened (code ${e.code})`)); };
    ws.onerror = () => reject(new Error(`${name}: the connection to ${CONFIG.url} failed (error event)`));
    ws.onopen = () => resolve(ws);
  });
}
function wait(ws, what, look) {
  return within(what, new Promise((resolve, reject) => {
    const w = () => { if (look(resolve, reject)) ws.waiters.delete(w); };
    ws.waiters.add(w); w();
  }));
}
function expect(ws, what, pred) {
  return wait(ws, what, (resolve, reject) => {
    const i = ws.inbox.findIndex(pred);
    if (i >= 0) { resolve(ws.inbox.splice(i, 1)[0]); return true; }
    if (ws.closed) { reject(new Error(`${what}: the connection closed first (code ${ws.closed.code})`)); return true; }
    return false;
  });
}
const closed = (ws, what) => wait(ws, what, (resolve) => ws.closed ? (resolve(ws.closed), true) : false);
async function join(ws, user) {
  ws.send(JSON.stringify({ type: "join", room: "public", user }));
  const ack = await expect(ws, `the join acknowledgement for ${user}`, m => m.type === "join" && m.user === user);
  if (ack.room !== "public") throw new Error(`the acknowledgement names room ${JSON.stringify(ack.room)}`);
}
async function main() {
  const a = await within(step, open("the first socket"));
  step = "ws.extensions";
  extensions = a.extensions;
  const deflate = /(^|,)\s*permessage-deflate\b/.test(a.extensions);
  if (deflate !== CONFIG.deflate) {
    throw new Error(`ws.extensions is ${JSON.stringify(a.extensions)}: permessage-deflate ${CONFIG.deflate ? "expected" : "not expected"}`);
  }
  step = "the first socket joins room public";
  await join(a, CONFIG.users[0]);
  step = "open the second socket";
  const b = await within(step, open("the second socket"));
  step = "the second socket joins room public";
  await join(b, CONFIG.users[1]);
  step = "a chat from the first socket reaches the second";
  const text = `hello over ${CONFIG.url} ✓ ${"chat ".repeat(40)}`;
  a.send(JSON.stringify({ type: "chat", room: "public", text, ts: 1732233445566.25 }));
  const got = await expect(b, "the chat", m => m.type === "chat");
  if (got.text !== text || got.user !== CONFIG.users[0] || got.room !== "public" || got.ts !== 1732233445566.25) {
    throw new Error(`the chat arrived as ${JSON.stringify(got)}`);
  }
  step = "leave closes the second socket with 1000, cleanly";
  b.send(JSON.stringify({ type: "leave" }));
  const c = await closed(b, "the close event");
  if (c.code !== 1000 || !c.wasClean) throw new Error(`the close event has code ${c.code}, wasClean ${c.wasClean}`);
  a.close(1000);
  return `chat received; closed ${c.code}, clean`;
}
main().then(
  detail => console.log(MARKER + JSON.stringify({ ok: true, step: "done", detail, extensions })),
  e => console.log(MARKER + JSON.stringify({ ok: false, step, detail: e.message, extensions })));
"#;

/// What the page reported.
#[derive(Debug)]
struct Outcome {
    ok: bool,
    step: String,
    detail: String,
    extensions: Option<String>,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.ok { "passed" } else { "failed at" };
        write!(f, "{verdict} step \"{}\": {}", self.step, self.detail)?;
        if let Some(extensions) = &self.extensions {
            write!(f, " (ws.extensions {extensions:?})")?;
        }
        Ok(())
    }
}

/// Writes the page for `url` into `dir`.
fn write_page(dir: &Path, url: &str, deflate: bool) -> PathBuf {
    let config = json!({
        "url": url,
        "deflate": deflate,
        "users": ["browser-a", "browser-b"],
    });
    let page = dir.join("wss.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><meta charset=\"utf-8\"><title>wscbench wss</title>\
             <script>const MARKER = {marker}; const CONFIG = {config};{PAGE_SCRIPT}</script>",
            marker = json!(MARKER),
        ),
    )
    .unwrap();
    page
}

/// Opens `page` in headless chromium trusting the certificate whose SPKI hash is `pin`,
/// and reads the page's outcome from chromium's console log. Chromium is killed as soon
/// as the outcome is in (headless, it would otherwise keep the page open).
fn browse(page: &Path, pin: &str) -> Result<Outcome, String> {
    let profile = tempfile::tempdir().unwrap();
    let chromium = std::env::var("WSCBENCH_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let mut child = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            // Console messages go to stderr as `:CONSOLE(n)] "text", source: …`.
            "--enable-logging=stderr",
        ])
        .arg(format!("--ignore-certificate-errors-spki-list={pin}"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {chromium} (scripts/setup installs it): {e}"))?;
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut log = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(outcome) = outcome_of(&line) {
                let _ = tx.send(outcome);
            }
            log.push(line);
        }
        log
    });
    let outcome = rx.recv_timeout(BROWSER_TIMEOUT);
    let _ = child.kill();
    let _ = child.wait();
    let log = reader.join().unwrap_or_default();
    outcome.map_err(|_| {
        let tail = log[log.len().saturating_sub(20)..].join("\n");
        format!(
            "the page reported nothing within {BROWSER_TIMEOUT:?}; chromium's log ends:\n{tail}"
        )
    })
}

/// The page's outcome, if `line` of chromium's log is its console line.
fn outcome_of(line: &str) -> Option<Outcome> {
    if !line.contains(":CONSOLE") {
        return None;
    }
    let start = line.find(MARKER)? + MARKER.len();
    let end = line.rfind("\", source: ")?;
    let v: Value = serde_json::from_str(line.get(start..end)?).ok()?;
    Some(Outcome {
        ok: v["ok"].as_bool()?,
        step: v["step"].as_str()?.to_string(),
        detail: v["detail"].as_str().unwrap_or_default().to_string(),
        extensions: v["extensions"].as_str().map(str::to_string),
    })
}

/// How a server is started for one page.
struct Start<'a> {
    server: &'a Server,
    binary: &'a Path,
    /// Serve wss with this certificate (plain ws without).
    tls: Option<&'a RunCert>,
    deflate: bool,
}

/// Starts the server, opens the page against it over `scheme`, stops the server.
async fn run_page(start: Start<'_>, scheme: &str, expect_deflate: bool, pin: &str) -> Outcome {
    let id = &start.server.id;
    let mut extra = Vec::new();
    if let Some(cert) = start.tls {
        extra.extend(cert.host_args());
    }
    if start.deflate {
        extra.push("--deflate".to_string());
    }
    let port = local::free_port().unwrap();
    let mut process = LocalServer::spawn_with(start.binary, port, &extra, false)
        .unwrap_or_else(|e| panic!("{id}: starting {}: {e}", start.binary.display()));
    if let Some(cert) = start.tls {
        process = process.with_tls(cert.client_config());
    }
    process
        .wait_healthy(Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{id}: {} {extra:?} never became healthy: {e}",
                start.binary.display()
            )
        });
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(
        dir.path(),
        &format!("{scheme}://127.0.0.1:{port}/ws"),
        expect_deflate,
    );
    let pin = pin.to_string();
    let outcome = tokio::task::spawn_blocking(move || browse(&page, &pin))
        .await
        .unwrap();
    process.stop(Duration::from_secs(3)).await;
    outcome.unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every server offering wss (limited by `WSCBENCH_BROWSER_SERVERS`), with its binary.
fn wss_servers() -> Vec<(Server, PathBuf)> {
    let only: Vec<String> = std::env::var("WSCBENCH_BROWSER_SERVERS")
        .map(|s| {
            s.split(',')
                .map(|i| i.trim().to_string())
                .filter(|i| !i.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let binaries: Vec<(String, PathBuf)> = std::env::var("WSCBENCH_BROWSER_BINARIES")
        .map(|s| {
            s.split(',')
                .filter_map(|pair| pair.split_once('='))
                .map(|(id, path)| (id.trim().to_string(), PathBuf::from(path.trim())))
                .collect()
        })
        .unwrap_or_default();
    let all = catalog::discover(&repo().join("servers")).unwrap();
    for id in &only {
        assert!(
            all.iter().any(|s| &s.id == id),
            "WSCBENCH_BROWSER_SERVERS names {id}, which is no server"
        );
    }
    let servers: Vec<(Server, PathBuf)> = all
        .into_iter()
        .filter(|s| s.offers(Transport::Wss).is_ok())
        .filter(|s| only.is_empty() || only.contains(&s.id))
        .map(|s| {
            let binary = binaries
                .iter()
                .find(|(id, _)| *id == s.id)
                .map_or_else(|| s.binary_path(), |(_, path)| path.clone());
            assert!(
                binary.is_file(),
                "{}: no binary at {} (scripts/test builds every server before this step; \
                 or name one with WSCBENCH_BROWSER_BINARIES={}=PATH)",
                s.id,
                binary.display(),
                s.id
            );
            (s, binary)
        })
        .collect();
    assert!(
        !servers.is_empty(),
        "no server offers wss (or none was selected)"
    );
    servers
}

#[test]
fn the_console_line_of_the_page_is_read_back_and_other_lines_are_not() {
    let line = r#"[1:1:1126/190705.565948:INFO:CONSOLE:4] "WSCBENCH-BROWSER {"ok":false,"step":"ws.extensions","detail":"ws.extensions is \"\"","extensions":""}", source: file:///tmp/x/wss.html (4)"#;
    let outcome = outcome_of(line).unwrap();
    assert!(!outcome.ok);
    assert_eq!(outcome.step, "ws.extensions");
    assert_eq!(outcome.detail, "ws.extensions is \"\"");
    assert_eq!(outcome.extensions.as_deref(), Some(""));
    assert!(outcome_of(r#"[1:1:1126/1:INFO:CONSOLE:4] "hello", source: file:///x (1)"#).is_none());
    assert!(outcome_of(&line.replace(":CONSOLE", ":OTHER")).is_none());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs chromium and the built servers; scripts/test runs it"]
async fn chromium_speaks_wss_to_every_server_offering_it_and_gets_deflate_exactly_where_offered() {
    let servers = wss_servers();
    let cert = RunCert::make().unwrap();
    let pin = cert.spki_sha256().unwrap();

    // First, that the page can fail, against the first server offering deflate (else the
    // first): a wss page against a server serving plain ws, a page pinning another
    // certificate, and a page expecting deflate from a server started without --deflate.
    let (probe, binary) = servers
        .iter()
        .find(|(s, _)| s.offers(Transport::WssDeflate).is_ok())
        .unwrap_or(&servers[0]);
    let plain = Start {
        server: probe,
        binary,
        tls: None,
        deflate: false,
    };
    let seen = run_page(plain, "wss", false, &pin).await;
    eprintln!("probe: {} serving plain ws, a wss page: {seen}", probe.id);
    assert!(
        !seen.ok && seen.step == "open the first socket",
        "{}: a wss page against plain ws {seen}",
        probe.id
    );
    let other = RunCert::make().unwrap().spki_sha256().unwrap();
    let pinned_elsewhere = Start {
        server: probe,
        binary,
        tls: Some(&cert),
        deflate: false,
    };
    let seen = run_page(pinned_elsewhere, "wss", false, &other).await;
    eprintln!(
        "probe: {}, a page pinning another certificate: {seen}",
        probe.id
    );
    assert!(
        !seen.ok && seen.step == "open the first socket",
        "{}: a page pinning another certificate {seen}",
        probe.id
    );
    if probe.offers(Transport::WssDeflate).is_ok() {
        let no_deflate = Start {
            server: probe,
            binary,
            tls: Some(&cert),
            deflate: false,
        };
        let seen = run_page(no_deflate, "wss", true, &pin).await;
        eprintln!(
            "probe: {} without --deflate, a page expecting it: {seen}",
            probe.id
        );
        assert!(
            !seen.ok && seen.step == "ws.extensions",
            "{}: a page expecting deflate from a server without --deflate {seen}",
            probe.id
        );
    }

    let mut failures = Vec::new();
    for (server, binary) in &servers {
        let deflate = server.offers(Transport::WssDeflate).is_ok();
        let start = Start {
            server,
            binary,
            tls: Some(&cert),
            deflate,
        };
        let seen = run_page(start, "wss", deflate, &pin).await;
        let over = if deflate { "wss+deflate" } else { "wss" };
        eprintln!("{} over {over}: {seen}", server.id);
        if !seen.ok {
            failures.push(format!("{} over {over}: {seen}", server.id));
        }
    }
    assert!(
        failures.is_empty(),
        "chromium over wss:\n{}",
        failures.join("\n")
    );
}
