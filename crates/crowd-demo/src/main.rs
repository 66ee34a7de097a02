//! `crowd-demo`: see the library's docs, or `--help`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = crowd_demo::Args::parse();
    match crowd_demo::run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
