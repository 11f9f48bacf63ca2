//! The menu bar: File (open, recent files, close), Edit (undo, redo, save of the active file),
//! View (panels, theme), Connections (profiles and their checks), Help (shortcuts, the CLI).
//! Must never: do the work itself or change a pane's state; it sends commands.

use crate::panes::command::AppCommand;
use crate::widgets::look;
use crate::{CLI_USAGE, WalscopeApp};
use eframe::egui;

/// Shortcuts listed in Help (and beside the menu items).
pub const SHORTCUTS: &[(&str, &str)] = &[
    (
        "Ctrl+O",
        "open a file: type its path (Tab completes) or choose it; files can also be dropped on the window",
    ),
    ("Ctrl+W", "close the active file"),
    ("Ctrl+Tab / Ctrl+Shift+Tab", "next / previous file"),
    ("Ctrl+S", "save the active file (shows what changes first)"),
    ("Ctrl+Z / Ctrl+Shift+Z", "undo / redo an edit"),
    ("Ctrl+F", "filter rows"),
    ("Ctrl+Enter", "send the focused composer's request"),
    ("Esc", "cancel the focused job (stop the composer's call)"),
];

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| file_menu(app, ui));
        ui.menu_button("Edit", |ui| edit_menu(app, ui));
        ui.menu_button("View", |ui| view_menu(app, ui));
        // Stays open on a click, so a check's answer shows beside its profile.
        let keep_open = egui::containers::menu::MenuConfig::new()
            .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
        egui::containers::menu::MenuButton::new("Connections")
            .config(keep_open)
            .ui(ui, |ui| connections_menu(app, ui));
        ui.menu_button("Help", help_menu);
    });
}

fn file_menu(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    // The path is typed in the open dialog: a text box in a menu closed the menu when clicked.
    if ui.add(egui::Button::new("Open…").shortcut_text("Ctrl+O")).clicked() {
        app.send(AppCommand::ShowOpenDialog);
        ui.close();
    }
    ui.menu_button("Recent files", |ui| {
        if app.recent.wants_check() {
            app.send(AppCommand::RefreshRecent);
        }
        if app.recent.paths().is_empty() {
            ui.label("No recent files.");
        }
        for p in app.recent.paths().to_vec() {
            let missing = app.recent.missing(&p);
            let text = p.display().to_string();
            let r = ui.add_enabled(missing.is_none(), egui::Button::new(&text));
            let r = match &missing {
                Some(why) => r.on_disabled_hover_text(format!("Cannot open: {why}")),
                None => r,
            };
            if let Some(why) = &missing {
                ui.weak(format!("  {why}"));
            }
            if r.clicked() {
                app.send(AppCommand::Open(p));
                ui.close();
            }
        }
    });
    if let Some(tab) = app.tabs.get(app.active)
        && ui.add(egui::Button::new(format!("Close {}", tab.title())).shortcut_text("Ctrl+W")).clicked()
    {
        app.send(AppCommand::CloseTab(app.active));
        ui.close();
    }
}

fn edit_menu(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let Some(tab) = app.tabs.get(app.active) else {
        ui.add_enabled(false, egui::Button::new("Undo").shortcut_text("Ctrl+Z"));
        ui.add_enabled(false, egui::Button::new("Redo").shortcut_text("Ctrl+Shift+Z"));
        ui.add_enabled(false, egui::Button::new("Save").shortcut_text("Ctrl+S"));
        ui.weak("Open a file to edit it.");
        return;
    };
    let saving = tab.saving.is_some();
    let path = tab.path.clone();
    let mut asked = None;
    if ui.add_enabled(tab.can_undo(), egui::Button::new("Undo").shortcut_text("Ctrl+Z")).clicked() {
        asked = Some(AppCommand::Undo(path.clone()));
    }
    if ui.add_enabled(tab.can_redo(), egui::Button::new("Redo").shortcut_text("Ctrl+Shift+Z")).clicked() {
        asked = Some(AppCommand::Redo(path.clone()));
    }
    // Shows what would be written first (see panes::file::confirm_save).
    let save = egui::Button::new(format!("Save {}", tab.title())).shortcut_text("Ctrl+S");
    if ui.add_enabled(tab.can_save(), save).clicked() {
        asked = Some(AppCommand::AskSave { path: path.clone(), save_as: false });
        ui.close();
    }
    if ui.add_enabled(tab.can_save(), egui::Button::new("Save as…")).clicked() {
        asked = Some(AppCommand::AskSave { path, save_as: true });
        ui.close();
    }
    if saving {
        ui.weak("saving...");
    }
    if let Some(cmd) = asked {
        app.send(cmd);
    }
}

fn view_menu(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    ui.checkbox(&mut app.show_sidebar, "Sidebar");
    ui.checkbox(&mut app.show_schemas, "Schemas panel");
    ui.checkbox(&mut app.show_tasks, "Sync tasks panel");
    ui.checkbox(&mut app.show_connections, "Connections panel");
    for (words, id, _) in crate::panes::openable() {
        if ui.button(format!("{words} pane")).clicked() {
            app.send(AppCommand::OpenPane(id));
            ui.close();
        }
    }
    ui.separator();
    // Words, not the emoji egui's own theme buttons use (not every font has them).
    let current = ui.ctx().options(|o| o.theme_preference);
    for (pref, name) in [
        (egui::ThemePreference::System, "Theme: follow the system"),
        (egui::ThemePreference::Light, "Theme: light"),
        (egui::ThemePreference::Dark, "Theme: dark"),
    ] {
        if ui.selectable_label(current == pref, name).clicked() {
            ui.ctx().set_theme(pref);
        }
    }
    if app.has_demo() {
        ui.separator();
        ui.menu_button("Demo faults (demo_db.orders)", |ui| {
            use crate::panes::command::DemoFault;
            for f in DemoFault::ALL {
                if ui.button(f.words()).clicked() {
                    app.send(AppCommand::DemoFault(f));
                    ui.close();
                }
            }
        });
    }
    ui.separator();
    ui.weak("Drag a tab to split or rearrange; close it with its x.");
}

/// The Connections menu's endpoint and answer columns (the answer is shortened, whole on hover).
const ENDPOINT_WIDTH: f32 = 190.0;
const RESULT_WIDTH: f32 = 300.0;

/// Every profile with a Test and its last answer; the Connections panel and a new composer.
fn connections_menu(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    use crate::panes::connections::{CheckResult, transport_name};
    if !app.connections.loading {
        app.connections.loading = true;
        app.send(AppCommand::LoadProfiles);
    }
    // One action a line, as a menu reads; the profiles follow under a line.
    if ui.button("Manage connections...").clicked() {
        app.show_connections = true;
        app.layout.show_pane(crate::panes::PaneId::Connections);
        ui.close();
    }
    if ui.button("New request composer").clicked() {
        app.send(AppCommand::NewComposer { profile: None, method: None, request: Vec::new() });
        ui.close();
    }
    if ui.button("Salvage after a failover...").clicked() {
        app.send(AppCommand::NewSalvage);
        ui.close();
    }
    if ui.button("Replay a salvage...").clicked() {
        app.send(AppCommand::NewReplay { folder: None, new_primary: None });
        ui.close();
    }
    if ui.button("Timeline of a salvage folder...").clicked() {
        app.send(AppCommand::NewTimeline { folder: None });
        ui.close();
    }
    if ui.button("New sync-task dashboard").clicked() {
        app.send(AppCommand::NewDashboard);
        ui.close();
    }
    ui.separator();
    let profiles = app.connections.profiles();
    if profiles.is_empty() {
        ui.label("No connection profiles yet.");
    }
    egui::Grid::new("connections").striped(true).show(ui, |ui| {
        for (p, demo) in &profiles {
            ui.label(if *demo { format!("{} (demo)", p.name) } else { p.name.clone() });
            ui.label(transport_name(p.transport));
            // Fixed widths, so an answer arriving never moves the line or the menu sideways.
            look::fixed_width(ui, ENDPOINT_WIDTH, |ui| ui.monospace(&p.endpoint)).on_hover_text(&p.endpoint);
            if p.is_insecure() {
                ui.colored_label(ui.visuals().warn_fg_color, "INSECURE");
            } else {
                ui.label("");
            }
            let result = app.connections.result(&p.name);
            let running = matches!(result, Some(CheckResult::Running));
            if ui.add_enabled(!running, egui::Button::new(format!("Test {}", p.name))).clicked() {
                app.connections.checks.insert(p.name.clone(), CheckResult::Running);
                app.send(AppCommand::CheckProfile(p.clone()));
            }
            look::fixed_width(ui, RESULT_WIDTH, |ui| match result {
                None => {}
                Some(CheckResult::Running) => {
                    look::busy(ui);
                }
                Some(r) => {
                    let text = r.text();
                    r.show(ui);
                    ui.interact(ui.min_rect(), ui.scope_id().with(("answer", &p.name)), egui::Sense::hover())
                        .on_hover_text(text);
                }
            });
            ui.end_row();
        }
    });
    if let Some(Err(e)) = &app.connections.saved {
        ui.colored_label(ui.visuals().error_fg_color, format!("Saved profiles not loaded: {e}"));
    }
}

fn help_menu(ui: &mut egui::Ui) {
    ui.label("walscope: inspect and repair protobuf WAL traffic.");
    ui.label("Drop a dump file on the window, or use File > Open… (Ctrl+O).");
    ui.separator();
    ui.strong("Keyboard shortcuts");
    egui::Grid::new("shortcuts").show(ui, |ui| {
        for (keys, what) in SHORTCUTS {
            ui.monospace(*keys);
            ui.label(*what);
            ui.end_row();
        }
    });
    ui.separator();
    ui.strong("Command line (walscope --help for all)");
    egui::Grid::new("help_cli").show(ui, |ui| {
        for (cmd, what) in CLI_USAGE {
            ui.monospace(*cmd);
            ui.label(*what);
            ui.end_row();
        }
    });
}
