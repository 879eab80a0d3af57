package dev.hurray;

/** Layouts of the format ({@code HURRAY_LAYOUT_*}) with their wire tags. */
public enum Layout {
    /** Row-major (C order). */ ROW_MAJOR(1),
    /** Column-major (Fortran order). */ COLUMN_MAJOR(2),
    /** Strided: one signed stride per dimension, in elements. */ STRIDED(3),
    /** Tiled / blocked. */ TILED(4),
    /** Morton (Z-order). */ MORTON(5),
    /** Sparse coordinate list. */ COO(6),
    /** Compressed sparse row. */ CSR(7),
    /** Compressed sparse column. */ CSC(8),
    /** Compressed sparse fiber. */ CSF(9),
    /** Block-paged (paged KV cache). */ BLOCK_PAGED(10),
    /** Composite head. */ COMPOSITE_HEAD(11),
    /** Hilbert curve. */ HILBERT(64),
    /** A private extension layout (tags 240..254). */ EXTENSION(-1);

    private final int tag;

    Layout(int tag) {
        this.tag = tag;
    }

    /** @return the wire tag; -1 for {@link #EXTENSION} */
    public int tag() {
        return tag;
    }

    /** @return true for COO, CSR, CSC and CSF */
    public boolean isSparse() {
        return this == COO || this == CSR || this == CSC || this == CSF;
    }

    /**
     * @param tag a wire layout tag
     * @return its layout ({@link #EXTENSION} for 240..254)
     * @throws IllegalArgumentException for an unassigned tag
     */
    public static Layout fromTag(int tag) {
        for (Layout l : values()) {
            if (l.tag == tag) {
                return l;
            }
        }
        if (tag >= 240 && tag <= 254) {
            return EXTENSION;
        }
        throw new IllegalArgumentException("unassigned layout tag " + tag);
    }
}
