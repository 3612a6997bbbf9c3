//! Cairn embedded in a plain program: with only `CAIRN_DATABASE_URL` set —
//! no API, no generator, no Redis — it captures a short coding session,
//! generates its memory inline, searches it and prints the context a next
//! session would get.
//!
//! ```sh
//! CAIRN_DATABASE_URL=postgres://postgres@127.0.0.1/cairn cargo run -p cairn-core --example embedded
//! ```

use cairn_core::{Cairn, client::Event, search::Hit};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("CAIRN_DATABASE_URL").map_err(|_| "set CAIRN_DATABASE_URL")?;
    let cairn = Cairn::connect(&url).await?;
    let session = format!("embedded-{}", uuid::Uuid::new_v4().simple());

    cairn.start_session(&session, "/work/shop").await?;
    cairn
        .capture_batch(vec![
            Event::prompt(&session, "Deploys fail with an auth error pulling images. Why?"),
            Event::tool(
                &session,
                "Read",
                json!({"file_path": "/work/shop/deploy/pipeline.yaml"}),
                json!({"file": {"content": "imagePullSecrets:\n  - name: registry-creds\n"}}),
            ),
            Event::tool(
                &session,
                "Bash",
                json!({"command": "kubectl get secret registry-creds -o jsonpath='{.metadata.annotations.expires}'"}),
                json!({"stdout": "2026-11-01T00:00:00Z", "stderr": "", "exit_code": 0}),
            ),
            Event::tool(
                &session,
                "Bash",
                json!({"command": "scripts/rotate-registry.sh"}),
                json!({"stdout": "secret/registry-creds rotated", "stderr": "", "exit_code": 0}),
            ),
            Event::stop(
                &session,
                "The image pull failed because the Kubernetes secret registry-creds had expired; \
                 I rotated it with scripts/rotate-registry.sh.",
            ),
        ])
        .await?;
    cairn.end_session(&session).await?;

    let generated = cairn.generate().await?;
    println!(
        "generated inline: {} jobs completed, {} memories written",
        generated.completed, generated.rows
    );

    println!("\nsearch \"registry credentials expired\":");
    for hit in cairn.search("registry credentials expired", 5).await? {
        match hit {
            Hit::Observation { row, score } => println!("  {score:.3}  observation  {}", row.title),
            Hit::Summary { row, score } => {
                println!("  {score:.3}  {} summary  {}", row.scope, row.request)
            }
        }
    }

    println!("\nthe context a next session gets:\n");
    println!("{}", cairn.context(None).await?);
    cairn.close().await;
    Ok(())
}
