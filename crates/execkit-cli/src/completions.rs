//! `execkit completions <shell>`: the shell completion script, generated from the command line
//! definition by `clap_complete`, so it always matches the subcommands and options.

use clap::{Args, CommandFactory as _};
use clap_complete::Shell;

use crate::common::{self, EXIT_OK};

#[derive(Debug, Args)]
#[command(long_about = "Print a completion script for a shell on stdout.\n\n\
    bash: execkit completions bash > ~/.local/share/bash-completion/completions/execkit\n\
    zsh:  execkit completions zsh > \"${fpath[1]}/_execkit\"\n\
    fish: execkit completions fish > ~/.config/fish/completions/execkit.fish")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: Shell,
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut crate::Cli::command(), "execkit", &mut script);
    common::write_stdout(&script)?;
    Ok(EXIT_OK)
}
