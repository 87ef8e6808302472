//! The wscbench engine.
