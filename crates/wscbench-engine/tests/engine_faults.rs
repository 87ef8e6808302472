//! Image builds and clean-up against an engine that fails one chosen call: each stops with an
//! error naming the call and what had been done, and nothing panics or hangs.

mod fake_engine;

use fake_engine::FakeEngine;
use wscbench_engine::catalog::images::{self, ImageError};

fn fake_k6() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), b"\x7fELF not really k6").unwrap();
    file
}

#[tokio::test]
async fn a_failing_image_build_stops_with_the_engines_error() {
    let engine = FakeEngine::failing("build_image", 1);
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
    let engine = FakeEngine::failing("inspect_image", 1);
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
    let engine = FakeEngine::failing("nothing", 1);
    let err = images::build_k6_image(&engine, "/nonexistent/k6".as_ref(), false)
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::NoK6 { .. }), "{err}");
    assert!(err.to_string().contains("scripts/setup"), "{err}");
    assert!(engine.calls().is_empty());
}

#[tokio::test]
async fn a_built_image_is_reused_while_its_binary_is_unchanged() {
    let engine = FakeEngine::failing("nothing", 1);
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
    let engine = FakeEngine::failing("remove_all_containers", 1);
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
    let engine = FakeEngine::failing("remove_image", 2);
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
    let engine = FakeEngine::failing("list_images", 1);
    let cleaned = images::clean(&engine, true).await.unwrap();
    assert_eq!(cleaned.containers, 3);
    let engine = FakeEngine::failing("list_images", 1);
    let err = images::clean(&engine, false).await.unwrap_err();
    assert!(err.to_string().contains("list_images"), "{err}");
}
