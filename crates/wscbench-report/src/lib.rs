//! Comparison tables from stored results (placeholder until the report module lands).
