"""The service's routes, one module per concern; `pictorank.api.app` includes every router.

- ranking:    POST /rank, POST /rank/batch
- rerank:     POST /v1/rerank, /v2/rerank (the rerank API's shape, for its existing clients)
- suggest:    POST /suggest (the clue-giver: pictograms for a secret word)
- vocabulary: GET /hints, GET /hints/{id}/icon
- operations: GET /health, /ready, /metrics
- game:       the game page at /, its /static files, GET /puzzles/random, POST /puzzles/{id}/guess

Ranking is CPU work, so the endpoints are plain `def`: FastAPI runs them in its thread pool and
the event loop stays free; more throughput comes from more worker processes.
"""
