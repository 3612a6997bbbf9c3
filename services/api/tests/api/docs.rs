//! `/docs` works offline: the page and every asset it references come from
//! the API itself (no CDN), and the document it loads is the served one.

use cairn_testkit::spawn_app;

/// The values of `src=`, `href=` and `spec-url=` attributes in the page.
fn references(html: &str) -> Vec<String> {
    let mut out = vec![];
    for attr in ["src=\"", "href=\"", "spec-url=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            let end = rest.find('"').expect("a closed attribute");
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[tokio::test]
async fn docs_and_every_asset_it_references_come_from_the_api() {
    let app = spawn_app().await;
    let page = app.client.get(format!("{}/docs", app.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"),
        "the page names an external host: {html}"
    );

    let refs = references(&html);
    assert!(refs.iter().any(|r| r.ends_with(".js")), "no script in {html}");
    assert!(refs.iter().any(|r| r == "/openapi.json"), "no document in {html}");
    for r in &refs {
        assert!(
            r.starts_with('/') && !r.starts_with("//"),
            "{r} is not on this server"
        );
        let res = app.client.get(format!("{}{r}", app.base)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{r}");
        let kind = res.headers()["content-type"].to_str().unwrap().to_string();
        let body = res.bytes().await.unwrap();
        if r.ends_with(".js") {
            assert!(kind.contains("javascript"), "{r}: {kind}");
            assert!(
                body.len() > 500_000,
                "{r} is {} bytes, not the Redoc bundle",
                body.len()
            );
        } else {
            let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
            assert!(doc["components"]["securitySchemes"]["apiKey"].is_object());
        }
    }
}
