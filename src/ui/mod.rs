//! The desktop app. For now a single welcome window that says what walscope is and how to use
//! the headless CLI; the dump browser and editor panels build on this module.
//! Must never: block the UI thread on files or the network.

use eframe::egui;

/// Short description of the CLI shown in the window (kept in one place for tests).
pub const CLI_USAGE: &[(&str, &str)] = &[
    ("walscope decode --type T --format tree|json|text|wire FILE", "decode one message"),
    ("walscope encode --type T --from json|text FILE --out OUT", "encode JSON or text format"),
    ("walscope edit FILE --type T --set PATH=VALUE", "lossless edit, atomic save with FILE.bak"),
    ("walscope schema list | show NAME", "browse the loaded types"),
];

#[derive(Default)]
pub struct WelcomeApp {
    pub type_count: usize,
}

impl WelcomeApp {
    pub fn new() -> Self {
        let set = crate::schema::SchemaSet::builtin();
        WelcomeApp { type_count: set.symbols().len() }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("walscope");
            ui.label("Inspect, decode, edit and re-send protobuf write-ahead-log traffic: Milvus WAL dumps and OpenMLDB datasync records.");
            ui.label(format!("{} built-in types are loaded (Milvus, OpenMLDB datasync, brpc meta).", self.type_count));
            ui.separator();
            ui.label("The desktop views are being built. Everything works today from the command line:");
            egui::Grid::new("cli").striped(true).show(ui, |ui| {
                for (cmd, what) in CLI_USAGE {
                    ui.monospace(*cmd);
                    ui.label(*what);
                    ui.end_row();
                }
            });
            ui.separator();
            ui.label("Run `walscope --help` for every flag.");
        });
    }
}

impl eframe::App for WelcomeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        WelcomeApp::ui(self, ui);
    }
}

pub fn run_native() -> Result<(), eframe::Error> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([900.0, 420.0]).with_title("walscope"),
        ..Default::default()
    };
    eframe::run_native("walscope", options, Box::new(|_cc| Ok(Box::new(WelcomeApp::new()))))
}
