// TEMPORARY (not committed): opens the real window with the app's --demo servers, a salvage of
// the app's own demo old primary, and the Replay pane on it.
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::ui::WalscopeApp;

fn main() {
    let folder = std::path::PathBuf::from("/tmp/rshot/salvage-20261130-001500");
    let _ = std::fs::remove_dir_all(&folder);
    let mut app = WalscopeApp::new();
    app.config_dir = Some("/tmp/rshot/cfg".into());
    app.start_demo();
    let find = |n: &str| app.connections.demo.iter().find(|p| p.name == n).unwrap().endpoint.clone();
    let (old, new) = (find("demo-old-primary"), find("demo-new-primary"));
    eprintln!("old {old} new {new}");
    let p = |name: &str, addr: String| ConnectionProfile::plain(name, TransportKind::Grpc, addr);
    let mut spec = walscope::jobs::salvage_set::SalvageSetSpec::new(
        p("demo-new-primary", new),
        p("demo-old-primary", old),
        walscope::sim::milvus::OLD_CLUSTER_ID,
        walscope::sim::milvus_pair::MilvusPair::pchannels(),
        &folder,
    );
    spec.end_timetick = Some(470809974111208016);
    let rt = app.runtime().unwrap();
    rt.block_on(async {
        let run = walscope::jobs::salvage_set::start(spec).await.unwrap();
        let (_, results) = run.wait().await;
        for (p, r) in results {
            r.unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    });
    eprintln!("salvaged");
    app.new_replay(Some(folder), Some("demo-new-primary".into()));
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_inner_size([1400.0, 1150.0])
            .with_title("walscope"),
        ..Default::default()
    };
    eframe::run_native("walscope", options, Box::new(move |_cc| Ok(Box::new(app)))).unwrap();
}
