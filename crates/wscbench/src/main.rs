//! The `wscbench` binary: parse the command line, run one command, map errors to exit codes
//! (the codes are documented in `exit.rs` and in `wscbench --help`).

mod cli;
mod commands;
mod exit;

fn main() -> std::process::ExitCode {
    match cli::run(std::env::args_os()) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("error: {err:#}");
            exit::ExitCode::of_error(&err).into()
        }
    }
}
