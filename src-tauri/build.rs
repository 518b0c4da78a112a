fn main() {
    // The app's config sits at the top of the repository.
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri.conf.json at the top of the repository");
}
