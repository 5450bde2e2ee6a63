// Package sitemap finds and reads sitemaps (sitemaps.org protocol 0.9) to
// seed a crawl.
//
// So far it turns the Sitemap lines of a robots.txt file into sitemap URLs
// ([FromRobots]); the streaming reader for sitemap files comes with its own
// issue.
//
// The package does no I/O and never imports colly. Its functions are safe
// for concurrent use.
package sitemap
