"""The admission webhook: an adapter around `podrules.review` (the same verdict `lint` gives).

`create_app(settings)` builds the Flask app; `server` runs it under gunicorn over TLS; `certs` makes the
CA and serving certificate. Everything here needs the `[webhook]` extra (flask, gunicorn,
cryptography, prometheus-client); nothing outside this package and `vgpuctl.cli.webhook` imports it.
"""
