# vgpuctl admission webhook image.
#   docker build -t ghcr.io/vgpuctl/vgpuctl:0.1.0 .
# Two stages: the first builds a virtualenv with vgpuctl[webhook] (pip, wheels, any compiler stay there);
# the final stage is python:slim plus that virtualenv, run as a non-root user.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/vgpuctl
# Only what the package needs (no tests, no local virtualenvs in the build context).
COPY pyproject.toml README.md ./
COPY vgpuctl ./vgpuctl
RUN /opt/vgpuctl/bin/pip install ".[webhook]" \
 && /opt/vgpuctl/bin/pip uninstall -y pip setuptools wheel \
 && find /opt/vgpuctl -name '__pycache__' -prune -exec rm -rf {} +

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="vgpuctl" \
      org.opencontainers.image.description="Admission webhook for GPU/NPU sharing on the Volcano scheduler" \
      org.opencontainers.image.licenses="Apache-2.0"
# A fixed numeric uid/gid, so runAsNonRoot can verify it without /etc/passwd lookups.
RUN groupadd --system --gid 65532 vgpuctl \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vgpuctl
COPY --from=build /opt/vgpuctl /opt/vgpuctl
ENV PATH=/opt/vgpuctl/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8443
# Other subcommands (e.g. `vgpuctl webhook certs` in an init container) override `command`.
ENTRYPOINT ["vgpuctl", "webhook", "serve"]
CMD ["--port=8443"]
