"""Stage `videos` (workflow/rules/videos.smk): every configured source of videos -> one manifest row per video.

YouTube search in many languages, URL lists, local folders and the SQUID-E release (SQUID-E (Sanders et al., 2022)
§3.1, supplement A.1); retried downloads through yt-dlp, ffprobe facts, and a status for every video.
"""
