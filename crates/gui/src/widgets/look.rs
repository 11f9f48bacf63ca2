//! The window's one visual language (issue #38, item 5), used by every pane: primary,
//! secondary and danger buttons; status badges that carry an icon and a word besides their
//! colour (ux.md: nothing is signalled by colour alone), readable in both themes; segmented
//! choices that look like choices; empty states that say what is empty and what to do; long
//! text shortened with the whole on hover and a copy button; and the confirmation of an
//! irreversible action, a modal that never appears where the first click was.
//!
//! Must never: decide what an action does (panes do), or use a colour as the only sign.

use eframe::egui::{self, Color32, Response, RichText, Ui};

/// What a badge or a button says about its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Working as it should (RUNNING, ok).
    Good,
    /// Nothing to say yet (INIT).
    Neutral,
    /// Done, or a fact (SUCCESS).
    Info,
    /// Needs a look (REASSIGNING, stalled, truncated).
    Warn,
    /// Broken (FAILED, a decode error).
    Bad,
}

impl Tone {
    /// The tone's colour, darker on a light background and lighter on a dark one, so both
    /// themes read it (ux.md's colours: green, grey, blue, amber, red).
    pub fn color(self, ui: &Ui) -> Color32 {
        let (r, g, b) = self.rgb(ui.visuals().dark_mode);
        Color32::from_rgb(r, g, b)
    }

    /// A background in the tone, for a whole row in trouble: a faint wash of the colour, under
    /// which the theme's own text stays readable in both themes.
    pub fn fill(self, visuals: &egui::Visuals) -> Color32 {
        let (r, g, b) = self.rgb(visuals.dark_mode);
        let alpha = if visuals.dark_mode { 60 } else { 45 };
        Color32::from_rgba_unmultiplied(r, g, b, alpha)
    }

    fn rgb(self, dark: bool) -> (u8, u8, u8) {
        let (on_dark, on_light) = match self {
            Tone::Good => ((90, 200, 120), (20, 120, 50)),
            Tone::Neutral => ((170, 170, 170), (100, 100, 100)),
            Tone::Info => ((110, 165, 240), (30, 90, 190)),
            Tone::Warn => ((235, 180, 60), (160, 100, 0)),
            Tone::Bad => ((240, 100, 100), (180, 30, 30)),
        };
        if dark { on_dark } else { on_light }
    }

    /// The icon beside the word.
    pub fn icon(self) -> &'static str {
        match self {
            Tone::Good => "⏵",
            Tone::Neutral => "○",
            Tone::Info => "✔",
            Tone::Warn => "⚠",
            Tone::Bad => "✖",
        }
    }
}

/// Sets the window's warning and error text to the tones' colours in both themes: egui's
/// light-theme warning (orange on white) is hard to read, and the badges, buttons and words of
/// one tone must agree.
pub fn install(ctx: &egui::Context) {
    for (theme, dark) in [(egui::Theme::Dark, true), (egui::Theme::Light, false)] {
        ctx.style_mut_of(theme, |style| {
            let pick = |tone: Tone| {
                let (r, g, b) = tone.rgb(dark);
                Color32::from_rgb(r, g, b)
            };
            style.visuals.warn_fg_color = pick(Tone::Warn);
            style.visuals.error_fg_color = pick(Tone::Bad);
        });
    }
}

/// A badge: icon, word and colour together.
pub fn badge(ui: &mut Ui, tone: Tone, word: &str) -> Response {
    let color = tone.color(ui);
    egui::Frame::new()
        .stroke(egui::Stroke::new(1.0, color))
        .corner_radius(4.0)
        .inner_margin(egui::Margin::symmetric(4, 0))
        .show(ui, |ui| ui.label(RichText::new(format!("{} {word}", tone.icon())).color(color).strong()))
        .inner
}

/// The tone of an OpenMLDB sub-task status (ux.md: RUNNING green, INIT grey, SUCCESS blue,
/// REASSIGNING amber, FAILED red); an unknown word is neutral.
pub fn task_status_tone(status: &str) -> Tone {
    match status {
        "RUNNING" => Tone::Good,
        "SUCCESS" => Tone::Info,
        "REASSIGNING" => Tone::Warn,
        "FAILED" => Tone::Bad,
        _ => Tone::Neutral,
    }
}

/// The action a pane exists for (Send, Apply, Save): filled with the theme's accent.
pub fn primary(ui: &mut Ui, text: &str) -> Response {
    ui.add(primary_button(ui, text))
}

/// [`primary`]'s button, to add a shortcut or disable it (`ui.add_enabled`).
pub fn primary_button(ui: &Ui, text: &str) -> egui::Button<'static> {
    let fill = ui.visuals().selection.bg_fill;
    let ink = ui.visuals().selection.stroke.color;
    egui::Button::new(RichText::new(text).color(ink).strong()).fill(fill)
}

/// A button whose subject is already on screen beside it (a profile's card, a table's row):
/// it says only `text` ("Test"), and its accessible name says the whole (`name`, "Test
/// primary"), for a screen reader and for finding it.
pub fn named_button(ui: &mut Ui, text: &str, name: &str) -> Response {
    named(ui, egui::Button::new(text), name)
}

/// Adds `widget` with `name` as its accessible name (what it says may be shorter).
pub fn named(ui: &mut Ui, widget: impl egui::Widget, name: &str) -> Response {
    let enabled = ui.is_enabled();
    let r = ui.add(widget);
    r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, enabled, name));
    r
}

/// Everything else a pane offers (Copy hex, Cancel).
pub fn secondary(ui: &mut Ui, text: &str) -> Response {
    ui.button(text)
}

/// An action that destroys or changes something outside the window (delete a task, apply a
/// replay): red, with a warning sign, so it never looks like "Copy hex". Its confirmation is
/// [`Confirm`], not a second button in the same place.
pub fn danger(ui: &mut Ui, text: &str) -> Response {
    ui.add(danger_button(ui, text))
}

/// [`danger`]'s button, to add a shortcut or disable it (`ui.add_enabled`).
pub fn danger_button(ui: &Ui, text: &str) -> egui::Button<'static> {
    let fill = Tone::Bad.color(ui);
    let ink = if ui.visuals().dark_mode { Color32::BLACK } else { Color32::WHITE };
    egui::Button::new(RichText::new(format!("⚠ {text}")).color(ink).strong()).fill(fill)
}

/// A choice of one among a few, drawn as joined segments with the chosen one filled. Returns
/// whether the choice changed.
pub fn segmented<T: PartialEq + Copy>(ui: &mut Ui, value: &mut T, options: &[(T, &str)]) -> bool {
    let explained: Vec<(T, &str, &str)> = options.iter().map(|(v, l)| (*v, *l, "")).collect();
    segmented_explained(ui, value, &explained)
}

/// [`segmented`] with what each choice does on hover: `(value, label, hover)`.
pub fn segmented_explained<T: PartialEq + Copy>(
    ui: &mut Ui,
    value: &mut T,
    options: &[(T, &str, &str)],
) -> bool {
    let mut changed = false;
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = 0.0;
        for (option, label, hover) in options {
            let on = *value == *option;
            let mut button = egui::Button::new(*label).selected(on).corner_radius(0.0);
            if !on {
                button = button.fill(ui.visuals().extreme_bg_color);
            }
            let mut r = ui.add(button);
            if !hover.is_empty() {
                r = r.on_hover_text(*hover);
            }
            if r.clicked() && !on {
                *value = *option;
                changed = true;
            }
        }
    });
    changed
}

/// `add` in a cell exactly `width` wide (its content shortened, never widening it), so what
/// follows on the line stays put whatever the content (a test's answer arriving).
pub fn fixed_width<R>(ui: &mut Ui, width: f32, add: impl FnOnce(&mut Ui) -> R) -> R {
    let size = egui::vec2(width, ui.spacing().interact_size.y);
    ui.allocate_ui_with_layout(size, egui::Layout::left_to_right(egui::Align::Center), |ui| {
        ui.set_width(width);
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        add(ui)
    })
    .inner
}

/// What is empty and what to do about it, where the content would be.
pub fn empty_state(ui: &mut Ui, what: &str, next: &str) {
    ui.vertical(|ui| {
        ui.add_space(8.0);
        ui.label(RichText::new(what).strong());
        ui.weak(next);
        ui.add_space(8.0);
    });
}

/// A long text on one line, shortened to the room there is; the whole text on hover, and a
/// button that copies it.
pub fn long_text(ui: &mut Ui, text: &str) {
    ui.horizontal(|ui| {
        if ui.small_button("copy").on_hover_text("copy the whole text").clicked() {
            ui.ctx().copy_text(text.to_string());
        }
        ui.add(egui::Label::new(text).truncate()).on_hover_text(text);
    });
}

/// How often [`busy`] redraws its spinner: often enough to show life, rarely enough that a
/// window with a spinner on screen does not keep a core busy (egui's own spinner asks for
/// every frame).
pub const BUSY_FRAME: std::time::Duration = std::time::Duration::from_millis(100);

/// A spinner for work under way, redrawn at most every [`BUSY_FRAME`]: the only spinner the
/// window uses.
pub fn busy(ui: &mut Ui) -> Response {
    let size = ui.spacing().interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    if ui.is_rect_visible(rect) {
        let step = (ui.input(|i| i.time) / BUSY_FRAME.as_secs_f64()) as i64;
        let start = (step % 12) as f32 * std::f32::consts::TAU / 12.0;
        let radius = rect.height() / 2.0 - 2.0;
        let points: Vec<egui::Pos2> = (0..=18)
            .map(|k| {
                let a = start + k as f32 / 18.0 * std::f32::consts::TAU * 0.75;
                rect.center() + radius * egui::vec2(a.cos(), a.sin())
            })
            .collect();
        let stroke = egui::Stroke::new(2.0, ui.visuals().strong_text_color());
        ui.painter().add(egui::Shape::line(points, stroke));
        ui.ctx().request_repaint_after(BUSY_FRAME);
    }
    response
}

/// What the operator said to a [`Confirm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Still open.
    Open,
    Confirmed,
    Cancelled,
}

/// The confirmation of an irreversible action: a modal over the window (never where the first
/// click was, so a double click cannot confirm), saying what will happen, with the dangerous
/// button red and, for the worst actions, a word to type first.
pub struct Confirm<'a> {
    pub title: &'a str,
    /// What will happen, in words.
    pub what: &'a str,
    /// The red button's label.
    pub action: &'a str,
    /// A word the operator types before the action is enabled (`delete`, a table's name).
    pub typed_word: Option<&'a str>,
}

impl Confirm<'_> {
    /// Draws the modal; `typed` holds what was typed so far (kept by the caller between frames).
    pub fn show(&self, ctx: &egui::Context, id: egui::Id, typed: &mut String) -> Answer {
        let mut answer = Answer::Open;
        let modal = egui::Modal::new(id).show(ctx, |ui| {
            ui.set_max_width(440.0);
            ui.heading(self.title);
            ui.add(egui::Label::new(self.what).wrap());
            let ready = match self.typed_word {
                Some(word) => {
                    let asks = ui.label(format!("Type {word} to go on:"));
                    ui.text_edit_singleline(typed).labelled_by(asks.id);
                    typed.trim() == word
                }
                None => true,
            };
            ui.separator();
            ui.horizontal(|ui| {
                if secondary(ui, "Cancel").clicked() {
                    answer = Answer::Cancelled;
                }
                ui.add_enabled_ui(ready, |ui| {
                    if danger(ui, self.action).clicked() {
                        answer = Answer::Confirmed;
                    }
                });
            });
        });
        if modal.should_close() && answer == Answer::Open {
            answer = Answer::Cancelled;
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;

    #[derive(Default)]
    struct Asked {
        open: bool,
        typed: String,
        answer: Option<Answer>,
    }

    fn confirm_harness(word: Option<&'static str>) -> Harness<'static, Asked> {
        Harness::builder().with_size(egui::vec2(600.0, 400.0)).build_ui_state(
            move |ui, s: &mut Asked| {
                if danger(ui, "Delete the task").clicked() {
                    s.open = true;
                }
                if s.open {
                    let c = Confirm {
                        title: "Delete the sync task?",
                        what: "SyncTool stops syncing the table and forgets its progress.",
                        action: "Delete it",
                        typed_word: word,
                    };
                    match c.show(ui.ctx(), egui::Id::unique("confirm"), &mut s.typed) {
                        Answer::Open => {}
                        a => {
                            s.answer = Some(a);
                            s.open = false;
                        }
                    }
                }
            },
            Asked::default(),
        )
    }

    /// The irreversible action waits for its word: the red button is disabled until the word
    /// is typed, then confirms; Cancel answers Cancelled and confirms nothing.
    #[test]
    fn a_confirmation_waits_for_its_typed_word() {
        let mut h = confirm_harness(Some("delete"));
        h.get_by_label_contains("Delete the task").click();
        h.run();
        assert!(h.state().open);
        h.get_by_label_contains("Delete it").click();
        h.run();
        assert_eq!(h.state().answer, None, "disabled until the word is typed");
        h.get_by_label("Type delete to go on:").click();
        h.run();
        h.get_by_label("Type delete to go on:").type_text("delete");
        h.run();
        assert_eq!(h.state().typed, "delete");
        h.get_by_label_contains("Delete it").click();
        h.run();
        assert_eq!(h.state().answer, Some(Answer::Confirmed));

        let mut h = confirm_harness(None);
        h.get_by_label_contains("Delete the task").click();
        h.run();
        h.get_by_label("Cancel").click();
        h.run();
        assert_eq!(h.state().answer, Some(Answer::Cancelled));
    }

    /// A badge says its state in a word with an icon; a segmented choice changes on a click.
    /// egui's light-theme warning (orange on white) is replaced by the tone's darker amber,
    /// whose contrast on white is at least 4.5:1 (WCAG AA), and errors by the tone's red.
    #[test]
    fn warnings_and_errors_read_in_both_themes() {
        let ctx = egui::Context::default();
        install(&ctx);
        let luminance = |c: Color32| {
            let lin = |v: u8| {
                let v = v as f64 / 255.0;
                if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
            };
            0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
        };
        let contrast = |a: Color32, b: Color32| {
            let (x, y) = (luminance(a), luminance(b));
            (x.max(y) + 0.05) / (x.min(y) + 0.05)
        };
        for theme in [egui::Theme::Light, egui::Theme::Dark] {
            let v = ctx.style_of(theme).visuals.clone();
            for (what, c) in [("warning", v.warn_fg_color), ("error", v.error_fg_color)] {
                let ratio = contrast(c, v.panel_fill);
                assert!(ratio >= 4.5, "{what} text in {theme:?}: contrast {ratio:.2} on the panel");
            }
        }
        let light = ctx.style_of(egui::Theme::Light).visuals.warn_fg_color;
        assert_eq!(light, Color32::from_rgb(160, 100, 0));
    }

    #[test]
    fn badges_carry_a_word_and_an_icon_and_segments_choose() {
        let mut h = Harness::new_ui_state(
            |ui, choice: &mut u8| {
                badge(ui, task_status_tone("FAILED"), "FAILED");
                segmented(ui, choice, &[(0, "full"), (1, "incremental"), (2, "full + continuous")]);
            },
            2u8,
        );
        h.run();
        h.get_by_label("✖ FAILED");
        h.get_by_label("incremental").click();
        h.run();
        assert_eq!(*h.state(), 1);
        assert_eq!(task_status_tone("RUNNING"), Tone::Good);
        assert_eq!(task_status_tone("whatever"), Tone::Neutral);
    }
}

#[cfg(test)]
mod snapshots {
    use super::*;
    use egui_kittest::Harness;

    /// Every piece of the visual language at a fixed size in both themes: a badge per tone,
    /// the three buttons, a segmented choice, an empty state and a shortened long text.
    #[test]
    fn the_visual_language_in_both_themes() {
        let mut results = egui_kittest::SnapshotResults::new();
        for (theme, name) in [(egui::Theme::Dark, "look_dark"), (egui::Theme::Light, "look_light")] {
            let mut h =
                Harness::builder().with_size(egui::vec2(520.0, 220.0)).with_theme(theme).build_ui_state(
                    |ui, choice: &mut u8| {
                        ui.horizontal(|ui| {
                            for s in ["RUNNING", "INIT", "SUCCESS", "REASSIGNING", "FAILED"] {
                                badge(ui, task_status_tone(s), s);
                            }
                        });
                        ui.horizontal(|ui| {
                            primary(ui, "Send");
                            secondary(ui, "Copy hex");
                            danger(ui, "Delete the task");
                        });
                        segmented(
                            ui,
                            choice,
                            &[(0, "0 full"), (1, "1 incremental"), (2, "2 full + continuous")],
                        );
                        empty_state(
                            ui,
                            "No sync tasks on this SyncTool.",
                            "Create one below, or pick another SyncTool.",
                        );
                        long_text(ui, &"a long line of a header's JSON that does not fit ".repeat(4));
                    },
                    2u8,
                );
            h.run();
            h.snapshot(name);
            results.extend_harness(&mut h);
        }
    }
}
