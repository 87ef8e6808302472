//! Image builds and clean-up against an engine that fails one chosen call: each stops with an
//! error naming the call and what had been done, and nothing panics or hangs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use wscbench_engine::engine::{
    BoxFuture, ContainerSpec, ContainerState, Engine, EngineError, ImageInfo, UsageStream,
};
use wscbench_engine::images::{self, ImageError};

/// An engine holding a few images and containers that fails the call named `fail`
/// (the `nth` time it is made, counting from 1).
struct FailingEngine {
    fail: &'static str,
    nth: usize,
    calls: Mutex<Vec<String>>,
    images: Mutex<HashMap<String, ImageInfo>>,
}

impl FailingEngine {
    fn new(fail: &'static str, nth: usize) -> Self {
        let images = (0..3)
            .map(|i| {
                let id = format!("sha256:{i}");
                (
                    id.clone(),
                    ImageInfo {
                        id,
                        tags: vec![format!("wsc-{i}:latest")],
                        ..Default::default()
                    },
                )
            })
            .collect();
        Self {
            fail,
            nth,
            calls: Mutex::new(Vec::new()),
            images: Mutex::new(images),
        }
    }

    /// Records the call; fails it if it is the chosen one.
    fn call(&self, name: &str) -> Result<(), EngineError> {
        let mut calls = self.calls.lock().unwrap();
        calls.push(name.to_string());
        let made = calls.iter().filter(|c| *c == name).count();
        if name == self.fail && made == self.nth {
            return Err(EngineError::Failed {
                action: name.to_string(),
                message: "injected failure".into(),
            });
        }
        Ok(())
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

impl Engine for FailingEngine {
    fn start<'a>(&'a self, _spec: &'a ContainerSpec) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async { self.call("start").map(|()| "c1".into()) })
    }
    fn state<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<ContainerState, EngineError>> {
        Box::pin(async { self.call("state").map(|()| ContainerState::default()) })
    }
    fn usage(&self, _id: &str) -> UsageStream {
        Box::pin(futures_util::stream::empty())
    }
    fn stop<'a>(
        &'a self,
        _id: &'a str,
        _grace: Duration,
    ) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async { self.call("stop") })
    }
    fn pause<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async { self.call("pause") })
    }
    fn unpause<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async { self.call("unpause") })
    }
    fn logs<'a>(
        &'a self,
        _id: &'a str,
        _lines: usize,
    ) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async { self.call("logs").map(|()| String::new()) })
    }
    fn remove<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async { self.call("remove") })
    }
    fn remove_run<'a>(&'a self, _run_id: &'a str) -> BoxFuture<'a, Result<usize, EngineError>> {
        Box::pin(async { self.call("remove_run").map(|()| 0) })
    }
    fn remove_all_containers(&self) -> BoxFuture<'_, Result<usize, EngineError>> {
        Box::pin(async { self.call("remove_all_containers").map(|()| 3) })
    }
    fn build_image<'a>(
        &'a self,
        tag: &'a str,
        _context: Vec<u8>,
        labels: &'a HashMap<String, String>,
    ) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("build_image")?;
            self.images.lock().unwrap().insert(
                tag.to_string(),
                ImageInfo {
                    id: format!("sha256:{tag}"),
                    tags: vec![tag.to_string()],
                    labels: labels.clone(),
                    size_bytes: 1,
                },
            );
            Ok(())
        })
    }
    fn inspect_image<'a>(
        &'a self,
        tag: &'a str,
    ) -> BoxFuture<'a, Result<Option<ImageInfo>, EngineError>> {
        Box::pin(async move {
            self.call("inspect_image")?;
            Ok(self.images.lock().unwrap().get(tag).cloned())
        })
    }
    fn list_images(&self) -> BoxFuture<'_, Result<Vec<ImageInfo>, EngineError>> {
        Box::pin(async {
            self.call("list_images")?;
            let mut images: Vec<_> = self.images.lock().unwrap().values().cloned().collect();
            images.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(images)
        })
    }
    fn remove_image<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("remove_image")?;
            self.images.lock().unwrap().remove(id);
            Ok(())
        })
    }
}

fn fake_k6() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), b"\x7fELF not really k6").unwrap();
    file
}

#[tokio::test]
async fn a_failing_image_build_stops_with_the_engines_error() {
    let engine = FailingEngine::new("build_image", 1);
    let k6 = fake_k6();
    let err = images::build_k6_image(&engine, k6.path(), false)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("build_image: injected failure"),
        "{err}"
    );
    assert!(!engine.images.lock().unwrap().contains_key(images::K6_TAG));
}

#[tokio::test]
async fn a_failing_image_inspection_stops_the_build_before_it_starts() {
    let engine = FailingEngine::new("inspect_image", 1);
    let k6 = fake_k6();
    let err = images::build_k6_image(&engine, k6.path(), false)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("inspect_image: injected failure"),
        "{err}"
    );
    assert!(!engine.calls().contains(&"build_image".to_string()));
}

#[tokio::test]
async fn a_missing_k6_is_a_set_up_error_naming_the_remedy() {
    let engine = FailingEngine::new("nothing", 1);
    let err = images::build_k6_image(&engine, "/nonexistent/k6".as_ref(), false)
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::NoK6 { .. }), "{err}");
    assert!(err.to_string().contains("scripts/setup"), "{err}");
    assert!(engine.calls().is_empty());
}

#[tokio::test]
async fn a_built_image_is_reused_while_its_binary_is_unchanged() {
    let engine = FailingEngine::new("nothing", 1);
    let k6 = fake_k6();
    let first = images::build_k6_image(&engine, k6.path(), false)
        .await
        .unwrap();
    let second = images::build_k6_image(&engine, k6.path(), false)
        .await
        .unwrap();
    assert!(first.rebuilt && !second.rebuilt);
    assert_eq!(
        engine
            .calls()
            .iter()
            .filter(|c| *c == "build_image")
            .count(),
        1
    );
}

#[tokio::test]
async fn clean_stops_when_containers_cannot_be_removed() {
    let engine = FailingEngine::new("remove_all_containers", 1);
    let err = images::clean(&engine, false).await.unwrap_err();
    assert_eq!(err.done, images::Cleaned::default());
    assert!(
        err.to_string()
            .contains("remove_all_containers: injected failure"),
        "{err}"
    );
    assert!(!engine.calls().contains(&"list_images".to_string()));
}

#[tokio::test]
async fn clean_says_what_it_removed_before_an_image_removal_failed() {
    let engine = FailingEngine::new("remove_image", 2);
    let err = images::clean(&engine, false).await.unwrap_err();
    assert_eq!(
        err.done,
        images::Cleaned {
            containers: 3,
            images: 1
        }
    );
    let text = err.to_string();
    assert!(text.contains("removing image wsc-1:latest"), "{text}");
    assert!(
        text.contains("removed 3 container(s) and 1 image(s) before that"),
        "{text}"
    );
}

#[tokio::test]
async fn clean_that_keeps_images_never_lists_them() {
    let engine = FailingEngine::new("list_images", 1);
    let cleaned = images::clean(&engine, true).await.unwrap();
    assert_eq!(cleaned.containers, 3);
    let engine = FailingEngine::new("list_images", 1);
    let err = images::clean(&engine, false).await.unwrap_err();
    assert!(err.to_string().contains("list_images"), "{err}");
}
