//! The `wscbench` binary: parse the command line, run one command, map errors to exit codes.

mod cli;
mod commands;

fn main() {
    let code = match cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            2
        }
    };
    std::process::exit(code);
}
