//! `pinloom`: Pinloom without a window. It opens the desktop app's database (or the one `--db`
//! names) and calls the same application layer, so a context assembled here is the one the app
//! would send.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use pinloom_app::{
    APP_IDENTIFIER, ApiError, Connections, DATA_DIR_ENV, DATABASE_FILE_NAME, Pinloom,
};

#[derive(Debug, Parser)]
#[command(
    name = "pinloom",
    version,
    about = "Pinloom from the command line: the app's trees and contexts, without the window."
)]
struct Cli {
    /// The database file; the desktop app's by default (PINLOOM_DATA_DIR moves it, as for the app).
    #[arg(long, global = true, value_name = "FILE")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The context a send from a message would carry under a model profile.
    Context {
        /// The message (its id, as `pinloom tree` lists it).
        #[arg(long)]
        node: i64,
        /// The model profile; the first one by name when absent.
        #[arg(long)]
        profile: Option<String>,
        /// How to show it.
        #[arg(long, value_enum, default_value_t = ContextFormat::Markdown)]
        format: ContextFormat,
    },
    /// ThreadMind's statistics for a message's chain of threads.
    Stats {
        /// The message.
        #[arg(long)]
        node: i64,
        /// The model profile; the first one by name when absent.
        #[arg(long)]
        profile: Option<String>,
    },
    /// A tree as indented text; the list of trees when no tree is given.
    Tree {
        /// The tree's id.
        id: Option<i64>,
    },
    /// Markdown of a whole tree, or of the thread that ends at a message.
    Export {
        /// The tree to export whole.
        #[arg(long, conflicts_with = "node", required_unless_present = "node")]
        tree: Option<i64>,
        /// The message whose thread to export.
        #[arg(long)]
        node: Option<i64>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ContextFormat {
    /// ThreadMind's markdown: the system context, ancestor summaries and the active thread.
    Markdown,
    /// The plan as JSON: every slice, included or cut with the reason, and the request.
    Plan,
    /// The request body exactly as the provider would receive it.
    Request,
}

fn database(cli_db: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(db) = cli_db {
        return Ok(db);
    }
    let folder =
        pinloom_app::resolve_data_dir(std::iter::empty(), std::env::var_os(DATA_DIR_ENV), || {
            dirs::data_dir().map(|data| data.join(APP_IDENTIFIER))
        })?;
    Ok(folder.join(DATABASE_FILE_NAME))
}

async fn run(cli: Cli) -> anyhow::Result<String> {
    let path = database(cli.db)?;
    if !path.exists() {
        anyhow::bail!(ApiError::invalid_input(format!(
            "there is no Pinloom database at {}; start the app once, or choose one with --db FILE",
            path.display()
        )));
    }
    let pinloom = Pinloom::open_database(path, Connections::default()).await?;
    let profile = |chosen: Option<String>| async {
        match chosen {
            Some(name) => anyhow::Ok(name),
            None => pinloom
                .model_profiles()
                .await?
                .into_iter()
                .next()
                .map(|profile| profile.name)
                .context(
                    "the database has no model profiles; add one in the app, or pass --profile",
                ),
        }
    };
    match cli.command {
        Command::Context { node, profile: chosen, format } => {
            let name = profile(chosen).await?;
            match format {
                ContextFormat::Markdown => pinloom.threadmind_markdown(node, name).await,
                ContextFormat::Plan => {
                    let plan = pinloom.preview(node, name, None).await?;
                    Ok(serde_json::to_string_pretty(&plan)?)
                }
                ContextFormat::Request => Ok(pinloom.preview(node, name, None).await?.body),
            }
        }
        Command::Stats { node, profile: chosen } => {
            let name = profile(chosen).await?;
            pinloom.threadmind_stats(node, name).await
        }
        Command::Tree { id: Some(id) } => pinloom.tree_text(id).await,
        Command::Export { node: Some(node), .. } => pinloom.thread_markdown(node).await,
        Command::Export { tree: Some(tree), .. } => pinloom.tree_markdown(tree).await,
        Command::Export { .. } => anyhow::bail!(ApiError::invalid_input(
            "export needs --tree ID (the whole tree) or --node ID (one thread)"
        )),
        Command::Tree { id: None } => {
            let trees = pinloom.list_trees().await?;
            Ok(trees
                .iter()
                .map(|tree| format!("{}\t{}\t{} messages", tree.id, tree.title, tree.message_count))
                .collect::<Vec<_>>()
                .join("\n"))
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(output) => {
            println!("{}", output.trim_end());
            ExitCode::SUCCESS
        }
        Err(error) => {
            // The same `{ code, message }` the app's window gets, in words on stderr.
            let error = ApiError::from(error);
            eprintln!("pinloom: {}", error.message);
            ExitCode::from(if error.code == pinloom_app::ErrorCode::InvalidInput { 2 } else { 1 })
        }
    }
}
