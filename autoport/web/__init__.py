"""The one web layer of the pages: the consent pages, the owner portal and the developer
console are surfaces (`surface.Surface`) drawn, protected and worded the same way.
docs/development.md ("Pages: the web layer") has the map."""
