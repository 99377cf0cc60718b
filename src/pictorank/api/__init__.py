"""pictorank's HTTP service.

`pictorank.api.app.create_app(settings)` builds the FastAPI app; `pictorank serve` runs it with
uvicorn. Modules: settings (PICTORANK_* variables), schemas (request/response bodies), service
(ranking without HTTP), routes, middleware (body limit, metrics), serve (the CLI command).
"""
