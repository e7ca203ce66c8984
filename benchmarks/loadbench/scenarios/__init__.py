"""The numbered scenarios; each exposes ``async def run(settings) -> Section``."""
