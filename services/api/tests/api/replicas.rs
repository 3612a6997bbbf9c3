//! Two API replicas of one deployment (one database, one Redis): a token
//! revoked through one is refused by the other within the auth cache's
//! TTL, though that replica had it cached as good.

use std::time::{Duration, Instant};

use cairn_testkit::{Options, spawn_app_with};
use serde_json::json;

const TTL_MS: u64 = 400;

#[tokio::test]
async fn a_token_revoked_on_one_replica_is_refused_by_the_other_within_the_cache_ttl() {
    let a = spawn_app_with(Options {
        extra: vec![("CAIRN_AUTH_CACHE_TTL_MS", TTL_MS.to_string())],
        ..Default::default()
    })
    .await;
    let b = a.restart().await;
    let (status, minted) = a
        .post(
            "/v1/admin/tokens",
            Some(&a.admin_token),
            &json!({"name": "laptop", "scopes": ["read"]}),
        )
        .await;
    assert_eq!(status, 201, "{minted}");
    let (id, secret) = (
        minted["token"]["id"].as_str().unwrap().to_string(),
        minted["secret"].as_str().unwrap().to_string(),
    );
    // Both replicas have seen it good (and cached it).
    for app in [&a, &b] {
        let (status, body) = app.get("/v1/jobs", Some(&secret)).await;
        assert_eq!(status, 200, "{body}");
    }

    let (status, body) = a
        .post(
            &format!("/v1/admin/tokens/{id}/revoke"),
            Some(&a.admin_token),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let revoked = Instant::now();
    let (status, body) = a.get("/v1/jobs", Some(&secret)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("token_revoked")),
        "{body}"
    );

    let limit = Duration::from_millis(TTL_MS) + Duration::from_millis(600);
    loop {
        let (status, body) = b.get("/v1/jobs", Some(&secret)).await;
        if status == 403 {
            assert_eq!(body["error"]["code"], "token_revoked", "{body}");
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            revoked.elapsed() < limit,
            "the other replica still accepts the revoked token after {:?}",
            revoked.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    println!(
        "refused by the other replica {:?} after the revocation",
        revoked.elapsed()
    );
}
