"""pictorank's HTTP service.

`pictorank.api.app.create_app(settings)` builds the FastAPI app; `pictorank serve` runs it with
uvicorn. Modules, each with one concern:

- settings:   the `PICTORANK_*` variables;
- schemas:    request and response bodies;
- service:    ranking without HTTP (`Clue` in, `Ranking` out; the open-vocabulary index);
- game:       the game page's puzzles, without HTTP;
- errors:     the one error body `{"detail": [{"loc", "msg", "type"}]}` and its handler;
- deps:       the routes' dependencies (the service, the game, JSON bodies only);
- icons:      the pictograms' SVG drawings, served from memory;
- routes/:    ranking, rerank, vocabulary, operations and game endpoints, one module each;
- middleware: body size limit and metrics;
- app:        the factory that puts these together;
- serve:      the `pictorank serve` command.
"""
