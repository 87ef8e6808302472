//! The binary sizes table: one row per language, one column per profile.

use wscbench_results::RunResult;

use crate::metrics::Better;
use crate::rows::{PROFILES, capitalized, ordered, ordered_languages, profile_name};
use crate::table::{ABSENT, Cell, Column, Row, Table};
use crate::units;

/// Binary (and image) sizes of every server: one row per language, one column per
/// profile. Sizes come from the build, so a failed run still has them; an external server
/// (`run --url`) was not built by wscbench and has none.
pub(crate) fn binary_sizes(results: &[&RunResult]) -> Table {
    let built: Vec<&RunResult> = results
        .iter()
        .copied()
        .filter(|r| r.external_url.is_none())
        .collect();
    let results = built.as_slice();
    let profiles = ordered(results.iter().map(|r| r.server.profile.as_str()), &PROFILES);
    let languages = ordered_languages(results.iter().map(|r| r.server.language.as_str()));
    let mut columns = vec![Column {
        name: "Language".into(),
        better: None,
        numeric: false,
        detail: false,
    }];
    columns.extend(profiles.iter().map(|profile| Column {
        name: profile_name(profile),
        better: Some(Better::Lower),
        numeric: true,
        detail: false,
    }));

    let mut rows = Vec::new();
    for language in &languages {
        let mut cells = vec![Cell::label(capitalized(language))];
        let mut any = false;
        for profile in &profiles {
            let server = results
                .iter()
                .filter(|r| r.server.language == *language && r.server.profile == *profile)
                .max_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))
                .map(|r| &r.server);
            let cell = match server.map(|s| (s.binary_size_bytes, s.image_size_bytes)) {
                Some((Some(binary), image)) => {
                    let image = image
                        .map(|i| format!(" (image {})", units::size(i)))
                        .unwrap_or_default();
                    Cell::figure(format!("{}{image}", units::size(binary)), binary as f64)
                }
                Some((None, Some(image))) => {
                    Cell::label(format!("{ABSENT} (image {})", units::size(image)))
                }
                _ => Cell::absent(),
            };
            any |= cell.text != ABSENT;
            cells.push(cell);
        }
        if any {
            rows.push(Row { cells });
        }
    }
    Table {
        title: "Binary sizes".into(),
        columns,
        rows,
        footnotes: Vec::new(),
        scenario: None,
        axis: None,
    }
}
