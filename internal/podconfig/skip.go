package podconfig

import (
	"regexp"
	"strings"
)

// sedTemp is the name of GNU sed's temporary file for -i ("sed" and six random characters,
// created in the file's directory and renamed over it when sed is done).
var sedTemp = regexp.MustCompile(`^sed[A-Za-z0-9]{6}$`)

// skipManifest says whether a file of the manifest directory is not read as a manifest, and
// why. As upstream, hidden files (".name", which also covers vim's ".name.swp") are skipped;
// beyond upstream, so are the files editors and tools leave beside the one they edit, which
// upstream reads and reports as broken or duplicate pods while the edit lasts: GNU sed -i's
// "sedXXXXXX", backups ending in "~", Emacs's "#name#" auto-saves, swap files (".swp", ".swo",
// ".swx") and ".tmp", ".bak", ".orig", ".rej", ".dpkg-*" and ".rpm*" files.
func skipManifest(name string) (reason string, skip bool) {
	switch {
	case strings.HasPrefix(name, "."):
		return "hidden file", true
	case sedTemp.MatchString(name):
		return "sed -i's temporary file", true
	case strings.HasSuffix(name, "~"):
		return "backup file (ends in ~)", true
	case strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return "Emacs auto-save file", true
	}
	for _, suffix := range []string{".swp", ".swo", ".swx", ".tmp", ".bak", ".orig", ".rej"} {
		if strings.HasSuffix(name, suffix) {
			return "editor or tool file (ends in " + suffix + ")", true
		}
	}
	for _, marker := range []string{".dpkg-", ".rpmnew", ".rpmsave", ".rpmorig"} {
		if strings.Contains(name, marker) {
			return "package manager file (" + strings.TrimPrefix(marker, ".") + ")", true
		}
	}
	return "", false
}
