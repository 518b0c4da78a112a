// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // `promptloom-app --version` answers before any window or display is needed, with the line
    // `promptloom --version` prints.
    if std::env::args_os().nth(1).is_some_and(|a| a == "--version") {
        println!("Promptloom {}", promptloom_version::VERSION_LINE);
        return;
    }
    promptloom_app::run();
}
