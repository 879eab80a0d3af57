package dev.hurray;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A decoded, validated tensor descriptor: element type, layout, shape, buffer table
 * and optional sections. Immutable; a plain Java value (no native resource), holding
 * the canonical encoding ({@link #toBytes()}) and the fields read from it by the
 * C ABI.
 *
 * <p>Shapes and strides are in elements; sizes, offsets and alignments in bytes.
 * Unsigned 64-bit wire values are carried in {@code long}s (use
 * {@link Long#toUnsignedString(long)}; a dynamic dimension reads as {@code -1}).
 */
public final class Descriptor {
    /**
     * One entry of the buffer table: size and placement of a buffer, never its address.
     *
     * @param byteSize size in bytes
     * @param alignment alignment in bytes
     * @param deviceTag {@code HURRAY_DEVICE_*}: {@link #DEVICE_CPU}, {@link #DEVICE_CUDA},
     *     {@link #DEVICE_ROCM}, ...
     * @param syncMode {@code HURRAY_SYNC_*}: 0 producer-synced
     * @param memoryClass {@code HURRAY_MEMORY_*}: 0 standard, 1 host-pinned, 2 unified
     */
    public record BufferEntry(long byteSize, int alignment, int deviceTag, int syncMode,
            int memoryClass) {
        /** Device tag of CPU memory. */
        public static final int DEVICE_CPU = 0;
        /** Device tag of CUDA device memory. */
        public static final int DEVICE_CUDA = 1;
        /** Device tag of ROCm device memory. */
        public static final int DEVICE_ROCM = 2;
    }

    /**
     * The quantization section's fixed fields (assigned schemes). Fields the scheme
     * does not have are 0; buffer indices it does not have are {@link #NO_BUFFER}.
     *
     * @param scheme {@code HURRAY_SCHEME_*}: {@link #PER_TENSOR_AFFINE}, {@link #PER_CHANNEL_AFFINE},
     *     {@link #PER_BLOCK_AFFINE}, {@link #NF4}, {@link #MXFP}
     * @param scale per-tensor scale
     * @param zeroPoint per-tensor zero point
     * @param axis quantized axis (a dimension index)
     * @param blockSize elements per block
     * @param scaleBufferIndex buffer holding the scales
     * @param zeroPointBufferIndex buffer holding the int32 zero points, or {@link #NO_BUFFER}
     *     (symmetric)
     * @param scaleTypeTag {@code HURRAY_SCALE_TYPE_*}: 1 f16, 2 bf16, 3 f32 (0 when unused)
     * @param flags the section header's flags (bit 0: symmetric); ignored when building
     */
    public record Quantization(int scheme, float scale, int zeroPoint, int axis, int blockSize,
            int scaleBufferIndex, int zeroPointBufferIndex, int scaleTypeTag, int flags) {
        /** {@code HURRAY_SCHEME_PER_TENSOR_AFFINE}. */
        public static final int PER_TENSOR_AFFINE = 1;
        /** {@code HURRAY_SCHEME_PER_CHANNEL_AFFINE}. */
        public static final int PER_CHANNEL_AFFINE = 2;
        /** {@code HURRAY_SCHEME_PER_BLOCK_AFFINE}. */
        public static final int PER_BLOCK_AFFINE = 3;
        /** {@code HURRAY_SCHEME_NF4}. */
        public static final int NF4 = 4;
        /** {@code HURRAY_SCHEME_MXFP}. */
        public static final int MXFP = 5;
        /** A buffer index meaning "no buffer" ({@code HURRAY_NO_BUFFER}). */
        public static final int NO_BUFFER = -1;

        /**
         * A per-tensor affine section.
         *
         * @param scale finite, non-zero scale
         * @param zeroPoint zero point, in the storage type's range
         * @return the section
         */
        public static Quantization perTensorAffine(float scale, int zeroPoint) {
            return new Quantization(PER_TENSOR_AFFINE, scale, zeroPoint, 0, 0, NO_BUFFER, NO_BUFFER,
                    0, 0);
        }
    }

    /**
     * The statistics section: advisory; a field counts only when its bit is set in
     * {@code computedMask} ({@code HURRAY_STAT_*}: 1 nnz, 2 sparsity, 4 min/max/absmax,
     * 8 mean/stddev, 16 N:M, 32 NaN/Inf).
     *
     * @param computedMask which fields are valid
     * @param nnz stored (non-zero) elements
     * @param sparsityRatio {@code (N - nnz) / N}
     * @param min smallest value
     * @param max largest value
     * @param absMax {@code max(|min|, |max|)}
     * @param mean arithmetic mean
     * @param stddev population standard deviation
     * @param nmN N of N:M structured sparsity
     * @param nmM M of N:M structured sparsity
     * @param hasNan at least one NaN
     * @param hasInf at least one infinity
     */
    public record Statistics(int computedMask, long nnz, double sparsityRatio, double min,
            double max, double absMax, double mean, double stddev, int nmN, int nmM,
            boolean hasNan, boolean hasInf) {}

    /**
     * The fields of a composite head ({@link Layout#COMPOSITE_HEAD}).
     *
     * @param memberCount members that follow the head
     * @param rule {@code HURRAY_COMPOSITION_*}: {@link #PARTITION}, {@link #OVERLAY},
     *     {@link #GROUP}
     * @param combineOp {@code HURRAY_COMBINE_*}: 0 none, 1 replace, 2 add (overlay only)
     */
    public record CompositeHead(int memberCount, int rule, int combineOp) {
        /** Members tile the head's index space exactly. */
        public static final int PARTITION = 1;
        /** A base plus corrections, combined by {@code combineOp}. */
        public static final int OVERLAY = 2;
        /** Independent tensors under one head. */
        public static final int GROUP = 3;
    }

    /**
     * The shard section: this tensor is the box {@code [offset[k], offset[k] + shape[k])}
     * of a parent of shape {@code parentShape}; both in elements, one value per
     * dimension. Equality compares the arrays' contents.
     *
     * @param parentShape the parent's shape
     * @param offset where this tensor starts in the parent
     */
    public record Shard(long[] parentShape, long[] offset) {
        /**
         * Copies both arrays.
         *
         * @param parentShape the parent's shape
         * @param offset the start in the parent
         */
        public Shard {
            parentShape = parentShape.clone();
            offset = offset.clone();
        }

        /** @return a copy of the parent's shape */
        @Override
        public long[] parentShape() {
            return parentShape.clone();
        }

        /** @return a copy of the offset */
        @Override
        public long[] offset() {
            return offset.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Shard s && Arrays.equals(parentShape, s.parentShape)
                    && Arrays.equals(offset, s.offset);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(parentShape) + Arrays.hashCode(offset);
        }

        @Override
        public String toString() {
            return "Shard[parentShape=" + Arrays.toString(parentShape) + ", offset="
                    + Arrays.toString(offset) + "]";
        }
    }

    /**
     * One nesting level of a tiled layout. Orders: 1 row-major, 2 column-major,
     * 3 strided (then the strides count), 4 (inner only) the tile is itself tiled by
     * the next level.
     *
     * @param outerOrder order of the tile grid
     * @param innerOrder order inside a tile
     * @param tileShape elements per tile, one per dimension
     * @param outerStrides grid strides in tiles (order 3), else zeros
     * @param innerStrides strides in elements inside a tile (order 3), else zeros
     */
    public record TileLevel(int outerOrder, int innerOrder, long[] tileShape, long[] outerStrides,
            long[] innerStrides) {
        /**
         * Copies the arrays.
         *
         * @param outerOrder order of the tile grid
         * @param innerOrder order inside a tile
         * @param tileShape elements per tile
         * @param outerStrides grid strides (order 3) or zeros
         * @param innerStrides strides inside a tile (order 3) or zeros
         */
        public TileLevel {
            tileShape = tileShape.clone();
            outerStrides = outerStrides.clone();
            innerStrides = innerStrides.clone();
        }

        /** @return a copy of the tile shape */
        @Override
        public long[] tileShape() {
            return tileShape.clone();
        }

        /** @return a copy of the outer strides */
        @Override
        public long[] outerStrides() {
            return outerStrides.clone();
        }

        /** @return a copy of the inner strides */
        @Override
        public long[] innerStrides() {
            return innerStrides.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TileLevel t && outerOrder == t.outerOrder
                    && innerOrder == t.innerOrder && Arrays.equals(tileShape, t.tileShape)
                    && Arrays.equals(outerStrides, t.outerStrides)
                    && Arrays.equals(innerStrides, t.innerStrides);
        }

        @Override
        public int hashCode() {
            return Objects.hash(outerOrder, innerOrder, Arrays.hashCode(tileShape),
                    Arrays.hashCode(outerStrides), Arrays.hashCode(innerStrides));
        }

        @Override
        public String toString() {
            return "TileLevel[outer=" + outerOrder + ", inner=" + innerOrder + ", tileShape="
                    + Arrays.toString(tileShape) + ", outerStrides=" + Arrays.toString(outerStrides)
                    + ", innerStrides=" + Arrays.toString(innerStrides) + "]";
        }
    }

    /**
     * The fields of a block-paged layout (paged KV cache).
     *
     * @param numPages physical pages in the pool
     * @param pageSize tokens per page
     * @param pagedAxis the paged axis (0)
     * @param numSeqs sequences in the batch
     * @param layerIndex the layer, or -1 ({@code HURRAY_LAYER_INDEX_NONE})
     * @param kvRole 0 key, 1 value, 2 fused
     * @param indexType element type of the block table: 0 u32, 1 u64
     */
    public record BlockPaged(long numPages, int pageSize, int pagedAxis, int numSeqs,
            int layerIndex, int kvRole, int indexType) {}

    /** Overlay member role: a correction ({@code HURRAY_MEMBER_ROLE_CORRECTION}). */
    public static final int ROLE_CORRECTION = 0;
    /** Overlay member role: the base ({@code HURRAY_MEMBER_ROLE_BASE}). */
    public static final int ROLE_BASE = 1;

    private final byte[] bytes;
    private final int versionMajor;
    private final int versionMinor;
    private final int typeTag;
    private final int layoutTag;
    private final int flags;
    private final long byteOffset;
    private final long[] shape;
    private final List<BufferEntry> buffers;
    private final long[] strides;
    private final OptionalLong nnz;
    private final Quantization quantization;
    private final Statistics statistics;
    private final Boolean cooSorted;
    private final CompositeHead compositeHead;
    private final Integer memberRole;
    private final Shard shard;
    private final List<TileLevel> tiling;
    private final long[] mortonBits;
    private final long[] hilbert;
    private final long[] csfModeOrder;
    private final BlockPaged blockPaged;

    /**
     * Made only by the native code ({@code descriptor_access.rs}), from a decoded and
     * validated descriptor's model: every field typed, each section null when absent.
     * Arrays are this object's own (freshly made by the native code).
     *
     * @param cooSorted COO {@code is_sorted} as 1 or 0, -1 for other layouts
     * @param memberRole {@link #ROLE_BASE}, {@link #ROLE_CORRECTION}, or -1 for none
     */
    Descriptor(byte[] bytes, int versionMajor, int versionMinor, int typeTag, int layoutTag,
            int flags, long byteOffset, long[] shape, BufferEntry[] buffers, long[] strides,
            boolean hasNnz, long nnz, Quantization quantization, Statistics statistics,
            int cooSorted, CompositeHead compositeHead, int memberRole, Shard shard,
            TileLevel[] tiling, long[] mortonBits, long[] hilbert, long[] csfModeOrder,
            BlockPaged blockPaged) {
        this.bytes = bytes;
        this.versionMajor = versionMajor;
        this.versionMinor = versionMinor;
        this.typeTag = typeTag;
        this.layoutTag = layoutTag;
        this.flags = flags;
        this.byteOffset = byteOffset;
        this.shape = shape;
        this.buffers = List.of(buffers);
        this.strides = strides;
        this.nnz = hasNnz ? OptionalLong.of(nnz) : OptionalLong.empty();
        this.quantization = quantization;
        this.statistics = statistics;
        this.cooSorted = cooSorted < 0 ? null : Boolean.valueOf(cooSorted == 1);
        this.compositeHead = compositeHead;
        this.memberRole = memberRole < 0 ? null : Integer.valueOf(memberRole);
        this.shard = shard;
        this.tiling = tiling == null ? List.of() : List.of(tiling);
        this.mortonBits = mortonBits;
        this.hilbert = hilbert;
        this.csfModeOrder = csfModeOrder;
        this.blockPaged = blockPaged;
    }

    /**
     * Decodes and validates one encoded descriptor.
     *
     * @param bytes exactly one descriptor's encoding (copied)
     * @return the descriptor
     * @throws FormatException when the bytes do not decode or validate (the message
     *     names the rule and the byte offset)
     * @throws HurrayException with {@link Status#NULL_POINTER} for empty bytes
     */
    public static Descriptor decode(byte[] bytes) {
        return Native.descriptorDecode(Objects.requireNonNull(bytes, "bytes"));
    }

    /**
     * The descriptor of a live tensor handle, read from the descriptor the tensor holds
     * (already decoded and validated): its bytes and fields, without decoding again.
     */
    static Descriptor ofTensor(long tensor) {
        return Native.tensorDescriptor(tensor);
    }

    /**
     * A row-major CPU descriptor with one buffer of exactly the contiguous size
     * (64-byte alignment, producer-synced, standard memory): the common case.
     *
     * @param type element type
     * @param shape dimensions, in elements (rank 0..64)
     * @return the descriptor
     * @throws HurrayException for a private type, a rank over 64 or a size overflow
     */
    public static Descriptor dense(ElementType type, long... shape) {
        return Native.descriptorDense(type.tag(), shape.clone());
    }

    /**
     * A builder for every assigned layout (the layout fields through
     * {@link Builder#strides}, {@link Builder#nnz}, {@link Builder#cooSorted},
     * {@link Builder#tileLevel}, {@link Builder#mortonBits}, {@link Builder#hilbert},
     * {@link Builder#csfModeOrder}, {@link Builder#blockPaged},
     * {@link Builder#compositeHead}); byte offset; a buffer table (CPU,
     * producer-synced); quantization, statistics, shard and the overlay member role.
     * Not exposed yet: private types and extension layouts (extension sections).
     *
     * @param type element type
     * @param layout layout
     * @param shape dimensions, in elements
     * @return a new builder
     */
    public static Builder builder(ElementType type, Layout layout, long... shape) {
        return new Builder(type, layout, shape.clone());
    }

    /** Collects the fields of a descriptor; {@link #build()} validates them in Rust. */
    public static final class Builder {
        private final ElementType type;
        private final Layout layout;
        private final long[] shape;
        private long[] strides;
        private long byteOffset;
        private boolean hasNnz;
        private long nnz;
        private int cooSorted = -1;
        private final List<BufferEntry> buffers = new ArrayList<>();
        private Quantization quant;
        private Statistics stats;
        private CompositeHead composite;
        private int memberRole = -1;
        private Shard shard;
        private final List<TileLevel> tiling = new ArrayList<>();
        private long[] mortonBits;
        private long[] hilbert;
        private long[] csfModeOrder;
        private BlockPaged blockPaged;

        private Builder(ElementType type, Layout layout, long[] shape) {
            this.type = Objects.requireNonNull(type, "type");
            this.layout = Objects.requireNonNull(layout, "layout");
            this.shape = shape;
        }

        /**
         * @param strides one signed stride per dimension, in elements (strided layout)
         * @return this builder
         */
        public Builder strides(long... strides) {
            this.strides = strides.clone();
            return this;
        }

        /**
         * @param byteOffset bytes from the start of buffer 0 to element [0, ..., 0]
         * @return this builder
         */
        public Builder byteOffset(long byteOffset) {
            this.byteOffset = byteOffset;
            return this;
        }

        /**
         * @param nnz stored elements of a sparse layout
         * @return this builder
         */
        public Builder nnz(long nnz) {
            this.hasNnz = true;
            this.nnz = nnz;
            return this;
        }

        /**
         * @param sorted COO {@code is_sorted}: coordinates strictly increasing
         * @return this builder
         */
        public Builder cooSorted(boolean sorted) {
            this.cooSorted = sorted ? 1 : 0;
            return this;
        }

        /**
         * Appends a buffer-table entry (CPU, producer-synced, standard memory).
         *
         * @param byteSize size in bytes
         * @param alignment alignment in bytes (a power of two, at least 64 when non-empty)
         * @return this builder
         */
        public Builder addBuffer(long byteSize, int alignment) {
            return addBuffer(byteSize, alignment, 0);
        }

        /**
         * Appends a buffer-table entry (CPU, producer-synced) with a memory class.
         *
         * @param byteSize size in bytes
         * @param alignment alignment in bytes
         * @param memoryClass {@code HURRAY_MEMORY_*}: 0 standard, 1 host-pinned, 2 unified
         * @return this builder
         */
        public Builder addBuffer(long byteSize, int alignment, int memoryClass) {
            buffers.add(new BufferEntry(byteSize, alignment, 0, 0, memoryClass));
            return this;
        }

        /**
         * Appends a buffer-table entry with any placement (a device other than the
         * CPU, for instance: a tensor over CUDA memory carries it but gives no CPU view
         * of it).
         *
         * @param entry size, alignment, device, sync mode and memory class
         * @return this builder
         */
        public Builder addBuffer(BufferEntry entry) {
            buffers.add(Objects.requireNonNull(entry, "entry"));
            return this;
        }

        /**
         * Adds a per-tensor affine quantization section.
         *
         * @param scale finite, non-zero scale
         * @param zeroPoint zero point, in the storage type's range
         * @return this builder
         */
        public Builder perTensorAffine(float scale, int zeroPoint) {
            return quantization(Quantization.perTensorAffine(scale, zeroPoint));
        }

        /**
         * Adds a quantization section of an assigned scheme ({@code flags} is implied
         * by the zero-point buffer index).
         *
         * @param q the section
         * @return this builder
         */
        public Builder quantization(Quantization q) {
            this.quant = Objects.requireNonNull(q, "q");
            return this;
        }

        /**
         * Sets the fields of a composite head (layout {@link Layout#COMPOSITE_HEAD},
         * no buffers).
         *
         * @param head member count, rule and combine op
         * @return this builder
         */
        public Builder compositeHead(CompositeHead head) {
            this.composite = Objects.requireNonNull(head, "head");
            return this;
        }

        /**
         * Appends a tiling level (tiled layout; the first call is the outermost level).
         *
         * @param level orders, tile shape and strides
         * @return this builder
         */
        public Builder tileLevel(TileLevel level) {
            tiling.add(Objects.requireNonNull(level, "level"));
            return this;
        }

        /**
         * @param bits Morton bits of each coordinate, one per dimension (Morton layout)
         * @return this builder
         */
        public Builder mortonBits(long... bits) {
            mortonBits = bits.clone();
            return this;
        }

        /**
         * @param order every dimension is {@code 2^order} (Hilbert layout)
         * @param curveRank the curve's rank
         * @return this builder
         */
        public Builder hilbert(int order, int curveRank) {
            hilbert = new long[] {order, curveRank};
            return this;
        }

        /**
         * @param modeOrder storage order of the levels, a permutation of 0..rank (CSF)
         * @return this builder
         */
        public Builder csfModeOrder(long... modeOrder) {
            csfModeOrder = modeOrder.clone();
            return this;
        }

        /**
         * @param f the block-paged fields (block-paged layout)
         * @return this builder
         */
        public Builder blockPaged(BlockPaged f) {
            blockPaged = Objects.requireNonNull(f, "f");
            return this;
        }

        /**
         * Adds the shard section.
         *
         * @param s parent shape and offset, one value per dimension each
         * @return this builder
         */
        public Builder shard(Shard s) {
            this.shard = Objects.requireNonNull(s, "s");
            return this;
        }

        /**
         * Adds the composite-member section of an overlay member.
         *
         * @param role {@link #ROLE_BASE} or {@link #ROLE_CORRECTION}
         * @return this builder
         */
        public Builder memberRole(int role) {
            this.memberRole = role;
            return this;
        }

        /**
         * Adds a statistics section.
         *
         * @param s the section
         * @return this builder
         */
        public Builder statistics(Statistics s) {
            this.stats = Objects.requireNonNull(s, "s");
            return this;
        }

        /**
         * Encodes and validates the descriptor.
         *
         * @return the descriptor
         * @throws HurrayException when a field is out of range or missing
         * @throws FormatException when a rule of the spec is broken (message names the
         *     rule and byte offset)
         */
        public Descriptor build() {
            if (type == ElementType.PRIVATE || layout == Layout.EXTENSION) {
                throw new IllegalArgumentException("private types and extension layouts need tags");
            }
            return Native.descriptorBuild(type.tag(), layout.tag(), shape, strides, byteOffset,
                    hasNnz, nnz, cooSorted, buffers.toArray(new BufferEntry[0]), quant, stats,
                    composite, memberRole, shard, tiling.toArray(new TileLevel[0]), mortonBits,
                    hilbert, csfModeOrder, blockPaged);
        }
    }

    /** @return a copy of the canonical encoding */
    public byte[] toBytes() {
        return bytes.clone();
    }

    byte[] bytesUnsafe() {
        return bytes;
    }

    /** @return {@code version_major} of the descriptor encoding */
    public int versionMajor() {
        return versionMajor;
    }

    /** @return {@code version_minor} of the descriptor encoding */
    public int versionMinor() {
        return versionMinor;
    }

    /** @return the element type */
    public ElementType elementType() {
        return ElementType.fromTag(typeTag);
    }

    /** @return the wire type tag */
    public int typeTag() {
        return typeTag;
    }

    /** @return the layout */
    public Layout layout() {
        return Layout.fromTag(layoutTag);
    }

    /** @return the wire layout tag */
    public int layoutTag() {
        return layoutTag;
    }

    /** @return {@code flags}: which optional sections are present ({@code HURRAY_FLAG_*}) */
    public int flags() {
        return flags;
    }

    /** @return bytes from the start of buffer 0 to element [0, ..., 0] */
    public long byteOffset() {
        return byteOffset;
    }

    /** @return a copy of the shape, in elements */
    public long[] shape() {
        return shape.clone();
    }

    /** @return the number of dimensions */
    public int rank() {
        return shape.length;
    }

    /**
     * @return the number of elements (product of the shape), or -1 when it overflows a
     *     {@code long} or a dimension is dynamic
     */
    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                return -1;
            }
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                return -1;
            }
        }
        return n;
    }

    /** @return the number of buffers in the buffer table */
    public int bufferCount() {
        return buffers.size();
    }

    /**
     * @param index buffer index, {@code 0 <= index < bufferCount()}
     * @return that buffer-table entry
     * @throws IndexOutOfBoundsException for a bad index
     */
    public BufferEntry buffer(int index) {
        return buffers.get(index);
    }

    /** @return the buffer table, unmodifiable */
    public List<BufferEntry> buffers() {
        return buffers;
    }

    /** @return the strides in elements (strided layout), or empty */
    public Optional<long[]> strides() {
        return strides == null ? Optional.empty() : Optional.of(strides.clone());
    }

    /** @return {@code nnz} of a sparse layout, or empty */
    public OptionalLong nnz() {
        return nnz;
    }

    /** @return the quantization section, or empty */
    public Optional<Quantization> quantization() {
        return Optional.ofNullable(quantization);
    }

    /** @return the statistics section, or empty */
    public Optional<Statistics> statistics() {
        return Optional.ofNullable(statistics);
    }

    /** @return the levels of a tiled layout, outermost first (empty for other layouts) */
    public List<TileLevel> tiling() {
        return tiling;
    }

    /** @return the Morton bits per dimension, or empty for other layouts */
    public Optional<long[]> mortonBits() {
        return Optional.ofNullable(mortonBits).map(long[]::clone);
    }

    /** @return {@code {order, curveRank}} of a Hilbert layout, or empty */
    public Optional<long[]> hilbert() {
        return Optional.ofNullable(hilbert).map(long[]::clone);
    }

    /** @return the CSF mode order, or empty for other layouts */
    public Optional<long[]> csfModeOrder() {
        return Optional.ofNullable(csfModeOrder).map(long[]::clone);
    }

    /** @return the block-paged fields, or empty for other layouts */
    public Optional<BlockPaged> blockPaged() {
        return Optional.ofNullable(blockPaged);
    }

    /** @return the shard section, or empty */
    public Optional<Shard> shard() {
        return Optional.ofNullable(shard);
    }

    /** @return the composite head's fields, or empty for other layouts */
    public Optional<CompositeHead> compositeHead() {
        return Optional.ofNullable(compositeHead);
    }

    /**
     * @return the overlay member role ({@link #ROLE_BASE}, {@link #ROLE_CORRECTION}), or
     *     empty when the descriptor has no composite-member section
     */
    public Optional<Integer> memberRole() {
        return Optional.ofNullable(memberRole);
    }

    /** @return COO {@code is_sorted}, or empty for other layouts */
    public Optional<Boolean> cooSorted() {
        return Optional.ofNullable(cooSorted);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Descriptor && Arrays.equals(bytes, ((Descriptor) o).bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "Descriptor[" + elementType() + " " + layout() + " " + Arrays.toString(shape)
                + ", " + buffers.size() + " buffer(s)]";
    }
}
