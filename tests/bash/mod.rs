//! Integration tests: the bash tool, through the dispatcher, with real bash and coreutils.

mod arguments;
mod lifecycle;
mod output;
mod output_hostile;
mod pty;
mod shell;
