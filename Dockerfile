# The pixgate image: a static binary on an empty base, run by an unprivileged user, with the CA
# certificates it needs to reach HTTPS webhook receivers and an upstream OpenID provider.
#
#   docker build -t pixgate .
#   docker run --rm -p 8080:8080 -e PIXGATE_SANDBOX=true -e PIXGATE_SANDBOX_DEMO_ACCOUNT=true pixgate
#
# Where no registry is reachable, `make image` builds the same image from Dockerfile.scratch.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# The modules first, so that a change of the code alone reuses the downloaded modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/pixgate ./cmd/pixgate \
 && printf 'pixgate:x:65532:65532:pixgate:/nonexistent:/sbin/nologin\n' > /out/passwd \
 && printf 'pixgate:x:65532:\n' > /out/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/passwd /out/group /etc/
COPY --from=build /out/pixgate /pixgate
USER 65532:65532
EXPOSE 8080
# `serve` by default; `docker run IMAGE clients create --name ...` manages accounts instead.
ENTRYPOINT ["/pixgate"]
CMD ["serve"]
