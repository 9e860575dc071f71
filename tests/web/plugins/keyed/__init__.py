from hermes_agent.api import WebBackend, WebResult


class Keyed(WebBackend):
    name = "keyed"
    env_vars = ("KEYED_API_KEY",)

    def is_available(self):
        return True

    def search(self, query, limit=5, **options):
        return [WebResult("keyed", "https://keyed.example/")]


def register(ctx):
    ctx.register_web_search_provider(Keyed())
