//! A run split over several k6 instances: the execution segments that divide one scenario
//! between them (k6 `--execution-segment` i/N with a shared `--execution-segment-sequence`,
//! the split k6-operator makes), and the start together through k6's REST API — every
//! instance starts paused, and is resumed with `PATCH /v1/status` once all are waiting.

use std::time::{Duration, Instant};

use crate::net::http;

/// k6's `ExecutionStatusPausedBeforeRun` (lib/execution.go): initialised and waiting.
const PAUSED_BEFORE_RUN: u64 = 4;

/// The segments of a run split `n` ways: the shared sequence (`0,1/3,2/3,1`) and each
/// instance's segment (`0:1/3`, `1/3:2/3`, `2/3:1`).
pub fn segments(n: usize) -> (String, Vec<String>) {
    let n = n.max(1);
    let point = |i: usize| match i {
        0 => "0".to_string(),
        i if i == n => "1".to_string(),
        i => format!("{i}/{n}"),
    };
    let sequence = (0..=n).map(point).collect::<Vec<_>>().join(",");
    let each = (0..n)
        .map(|i| format!("{}:{}", point(i), point(i + 1)))
        .collect();
    (sequence, each)
}

/// Why a k6 instance could not be started together with the others.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// Its REST API never said it was paused and ready.
    #[error("k6 at {addr} was not paused and ready within {timeout:?}: {last}")]
    NotReady {
        addr: String,
        timeout: Duration,
        last: String,
    },
    /// Resuming it failed.
    #[error("resuming k6 at {addr}: {detail}")]
    Resume { addr: String, detail: String },
}

/// Polls `GET /v1/status` every 100 ms until the instance is paused before its run. Between
/// polls, `gone` says whether its container has ended (and why), so a dead k6 is not waited out.
pub async fn wait_paused<T>(
    addr: &str,
    timeout: Duration,
    mut gone: impl AsyncFnMut() -> Option<T>,
) -> Result<Result<(), T>, SplitError> {
    let deadline = Instant::now() + timeout;
    let mut last;
    loop {
        match http::get(addr, "/v1/status", Duration::from_millis(500)).await {
            Ok(r) if r.status == 200 => match status_of(&r.body) {
                Some(PAUSED_BEFORE_RUN) => return Ok(Ok(())),
                other => last = format!("status {other:?}"),
            },
            Ok(r) => last = format!("HTTP {}", r.status),
            Err(e) => last = e.to_string(),
        }
        if let Some(why) = gone().await {
            return Ok(Err(why));
        }
        if Instant::now() > deadline {
            return Err(SplitError::NotReady {
                addr: addr.into(),
                timeout,
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn status_of(body: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value["data"]["attributes"]["status"].as_u64()
}

/// Resumes every instance at once; returns when each resume was answered, in milliseconds
/// after the first (so the largest is the start skew).
pub async fn resume_all(addrs: &[String]) -> Result<Vec<f64>, SplitError> {
    let body = br#"{"data":{"type":"status","id":"default","attributes":{"paused":false}}}"#;
    let resumes = addrs.iter().map(|addr| async move {
        let answer = http::request(
            hyper::Method::PATCH,
            addr,
            "/v1/status",
            body.to_vec(),
            Duration::from_secs(5),
        )
        .await;
        let at = Instant::now();
        match answer {
            Ok(r) if r.status == 200 => Ok(at),
            Ok(r) => Err(SplitError::Resume {
                addr: addr.clone(),
                detail: format!(
                    "HTTP {}: {}",
                    r.status,
                    String::from_utf8_lossy(&r.body).trim()
                ),
            }),
            Err(e) => Err(SplitError::Resume {
                addr: addr.clone(),
                detail: e.to_string(),
            }),
        }
    });
    let answered = futures_util::future::join_all(resumes)
        .await
        .into_iter()
        .collect::<Result<Vec<Instant>, _>>()?;
    let first = answered.iter().min().copied().unwrap_or_else(Instant::now);
    Ok(answered
        .iter()
        .map(|at| at.duration_since(first).as_secs_f64() * 1000.0)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    #[test]
    fn segments_cover_the_whole_run_once_with_a_shared_sequence() {
        assert_eq!(segments(1), ("0,1".to_string(), vec!["0:1".to_string()]));
        let (sequence, each) = segments(3);
        assert_eq!(sequence, "0,1/3,2/3,1");
        assert_eq!(each, ["0:1/3", "1/3:2/3", "2/3:1"]);
    }

    /// A stand-in for k6's REST API: answers GET /v1/status with `status`, and records the
    /// body of every PATCH.
    async fn fake_k6(status: u64) -> (String, tokio::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&request[..n]).to_string();
                let body = if text.starts_with("PATCH") {
                    let _ = tx.send(text.clone()).await;
                    r#"{"data":{"attributes":{"status":5,"paused":false}}}"#.to_string()
                } else {
                    format!(r#"{{"data":{{"attributes":{{"status":{status},"paused":true}}}}}}"#)
                };
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        (addr, rx)
    }

    #[tokio::test]
    async fn instances_are_resumed_once_all_are_paused_and_the_skew_is_measured() {
        let (a, mut a_patches) = fake_k6(PAUSED_BEFORE_RUN).await;
        let (b, mut b_patches) = fake_k6(PAUSED_BEFORE_RUN).await;
        for addr in [&a, &b] {
            wait_paused(addr, Duration::from_secs(2), async || None::<()>)
                .await
                .unwrap()
                .unwrap();
        }
        let after = resume_all(&[a, b]).await.unwrap();
        assert_eq!(after.len(), 2);
        assert!(after.contains(&0.0), "{after:?}");
        assert!(
            after.iter().all(|ms| (0.0..1000.0).contains(ms)),
            "{after:?}"
        );
        for patches in [&mut a_patches, &mut b_patches] {
            let patch = patches.recv().await.unwrap();
            assert!(patch.starts_with("PATCH /v1/status"), "{patch}");
            assert!(patch.contains(r#""paused":false"#), "{patch}");
        }
    }

    #[tokio::test]
    async fn an_instance_that_never_pauses_or_is_gone_is_not_waited_out() {
        let (initialising, _) = fake_k6(1).await;
        let err = wait_paused(
            &initialising,
            Duration::from_millis(300),
            async || None::<()>,
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("status Some(1)"), "{err}");
        let gone = wait_paused(&initialising, Duration::from_secs(30), async || {
            Some("exited")
        })
        .await
        .unwrap();
        assert_eq!(gone, Err("exited"));
        let nobody = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = nobody.local_addr().unwrap().to_string();
        drop(nobody);
        assert!(resume_all(&[addr]).await.is_err());
    }
}
