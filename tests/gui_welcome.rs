//! The window `walscope` opens with no arguments says what the tool is and how to use the CLI.
#![cfg(feature = "gui")]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use walscope::ui::{CLI_USAGE, WelcomeApp};

#[test]
fn welcome_window_explains_the_tool_and_the_cli() {
    let app = WelcomeApp::new();
    assert!(app.type_count > 150, "built-in schemas are counted: {}", app.type_count);
    let harness = Harness::new_ui_state(|ui, app: &mut WelcomeApp| app.ui(ui), app);
    harness.get_by_label("walscope");
    harness.get_by_label_contains("protobuf write-ahead-log traffic");
    harness.get_by_label_contains("built-in types are loaded");
    for (cmd, what) in CLI_USAGE {
        harness.get_by_label(cmd);
        harness.get_by_label(what);
    }
}
