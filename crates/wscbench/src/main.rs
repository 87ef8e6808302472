//! The `wscbench` binary: parse the command line, run one command, end with its exit code
//! (the codes are in `exit.rs` and in `wscbench --help`; which error gets which, in `errors.rs`).

mod args;
mod cli;
mod commands;
mod errors;
mod exit;

fn main() -> std::process::ExitCode {
    match cli::run(std::env::args_os()) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("error: {}", err.one_line());
            err.process_exit_code().into()
        }
    }
}
