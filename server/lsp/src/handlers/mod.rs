//! One small adapter per LSP method: convert the parameters, ask the analysis, convert the
//! result.

pub mod code_action;
pub mod code_lens;
pub mod did_change;
pub mod did_change_configuration;
pub mod did_change_watched_files;
pub mod did_close;
pub mod did_open;
pub mod execute_command;
pub mod hover;
pub mod initialize;
pub mod stats;
