//! `flotilla top [--all]`: a live terminal roster. Owns the loop: refuses
//! without a terminal (or with `--json`), sets the terminal up and always
//! restores it (quit, error, panic), reads keys on a thread, polls the
//! daemon every second and carries out the model's actions. The state and
//! key handling live in `model`, the drawing in `view`, the daemon calls in
//! `fetch`; this module must not grow any of them.

mod fetch;
mod model;
mod view;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tokio::sync::mpsc;

use crate::commands::Env;
use crate::exit::{CliError, OK};
use fetch::Poller;
use model::{Action, Key, Model};

/// How often the daemon is read.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// What the key thread hands the loop.
#[derive(Debug)]
enum Input {
    Key(Key),
    /// The terminal changed size: draw again.
    Resize,
}

/// Runs `top` until the user quits.
pub(crate) async fn run(env: &Env, all: bool) -> Result<u8> {
    let scripts = "for scripts use `flotilla roster --json` (and `flotilla lane list --json`)";
    if env.json {
        return Err(CliError::usage(
            "`flotilla top` is an interactive screen and has no JSON output",
            scripts,
        ));
    }
    if !std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "`flotilla top` needs a terminal (stdout is not one)",
            scripts,
        ));
    }
    let (tx, mut inputs) = mpsc::channel(64);
    let mut guard = Restore::new()?;
    let reader = std::thread::spawn(move || read_keys(&tx));
    let result = event_loop(&mut guard.0, env, all, &mut inputs).await;
    drop(inputs);
    drop(guard);
    // The thread sees the closed channel within one poll interval.
    let _ = reader.join();
    result
}

/// The terminal, in raw mode on the alternate screen until dropped.
/// `ratatui::try_init` also restores it from the panic hook.
struct Restore(DefaultTerminal);

impl Restore {
    fn new() -> Result<Self> {
        match ratatui::try_init() {
            Ok(terminal) => Ok(Self(terminal)),
            Err(e) => {
                ratatui::restore();
                Err(CliError::failed(
                    format!("cannot set up the terminal: {e}"),
                    None,
                ))
            }
        }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = self.0.show_cursor();
        ratatui::restore();
    }
}

impl std::fmt::Debug for Restore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Restore")
    }
}

/// Reads terminal events until the loop stops listening or the terminal
/// fails.
fn read_keys(tx: &mpsc::Sender<Input>) {
    while !tx.is_closed() {
        match event::poll(Duration::from_millis(100)) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(_) => return,
        }
        let input = match event::read() {
            Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => key(k).map(Input::Key),
            Ok(Event::Resize(..)) => Some(Input::Resize),
            Ok(_) => None,
            Err(_) => return,
        };
        if let Some(input) = input
            && tx.blocking_send(input).is_err()
        {
            return;
        }
    }
}

fn key(k: KeyEvent) -> Option<Key> {
    Some(match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Key::CtrlC,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        _ => return None,
    })
}

async fn event_loop(
    terminal: &mut DefaultTerminal,
    env: &Env,
    all: bool,
    inputs: &mut mpsc::Receiver<Input>,
) -> Result<u8> {
    let styled = crate::table::styled();
    let mut poller = Poller::new(env, all);
    let mut model = Model::default();
    let mut tick = tokio::time::interval(POLL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        terminal.draw(|f| view::draw(f, &model, styled))?;
        let input = tokio::select! {
            _ = tick.tick() => {
                refresh(&mut poller, &mut model).await;
                continue;
            }
            input = inputs.recv() => input,
        };
        let action = match input {
            // The key thread ended: the terminal is gone.
            None => return Ok(OK),
            Some(Input::Resize) => continue,
            Some(Input::Key(k)) => model.on_key(k),
        };
        match action {
            Action::None => {}
            Action::Quit => return Ok(OK),
            Action::Refresh => refresh(&mut poller, &mut model).await,
            Action::Interrupt(lane) => {
                model.notice = Some(poller.interrupt(&lane).await);
                refresh(&mut poller, &mut model).await;
            }
            Action::Archive(lane) => {
                model.notice = Some(poller.archive(&lane).await);
                refresh(&mut poller, &mut model).await;
            }
        }
    }
}

/// Reads the daemon once into the model; a failure is shown, not fatal.
async fn refresh(poller: &mut Poller, model: &mut Model) {
    match poller.snapshot().await {
        Ok(snapshot) => model.update(snapshot),
        Err(e) => model.unreachable = Some(poller.explain(&e)),
    }
    if let Some(lane) = &model.follow {
        model.follow_lines = poller.follow_lines(lane);
    }
}
