//! The `hurray` binary; everything lives in the library (`hurray_cli`).

fn main() -> std::process::ExitCode {
    hurray_cli::main()
}
