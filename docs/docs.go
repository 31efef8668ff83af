// Package docs embeds rocetap's reference documents, so that an installed
// binary shows them (`rocetap help mpt-format`, `rocetap help json`,
// `rocetap help model`) without the source tree.
package docs

import "embed"

// FS holds mpt-format.md, json.md and model.md.
//
//go:embed *.md
var FS embed.FS
