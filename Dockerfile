# The Slipway image: the static binary alone. Build `make build` first.
FROM scratch
COPY bin/slipway /slipway
ENTRYPOINT ["/slipway"]
