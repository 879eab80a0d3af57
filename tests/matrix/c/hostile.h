/* The C consumer of the hostile corpus (hostile.c). */
#ifndef HURRAY_MATRIX_HOSTILE_H
#define HURRAY_MATRIX_HOSTILE_H

/* `matrix hostile DIR`: reads every file and stream of DIR/manifest.tsv and prints one
 * result line per (case, container). Returns the exit status: 0, or 1 when library
 * objects are still alive at the end (a leak on an error path) or DIR/manifest.tsv
 * cannot be read. */
int hostile(const char *dir);

#endif
